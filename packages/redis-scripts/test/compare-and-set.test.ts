import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createCompareAndSet } from '../src/fast-paths/compare-and-set';
import type { RedisDriver, ScriptRunner } from '../src/driver';
import { rawCommand, sharedRedisUrl } from '@flight/test-servers';

const port = Number(new URL(sharedRedisUrl()).port || 6379);
const command = async (args: (string | number)[]) => {
  const reply = await rawCommand(port, args);
  if (reply instanceof Error) throw reply;
  return reply;
};
/** EVALSHA / EVAL over a plain connection (text arguments only). */
const scripts: ScriptRunner = {
  evalsha: (sha, keys, args) => command(['EVALSHA', sha, keys.length, ...keys, ...args.map(String)]),
  eval: (source, keys, args) => command(['EVAL', source, keys.length, ...keys, ...args.map(String)]),
};

describe('compareAndSet (the conditional SET, or its script where the server lacks it)', () => {
  it('writes only over the expected value, with its TTL; a missing key or another value is left as it is', async () => {
    const natives: string[] = [];
    const setIfEqual: NonNullable<RedisDriver['setIfEqual']> = async (key, value, ttlMs, expected) => {
      natives.push(key);
      return (await command(['SET', key, String(value), 'PX', ttlMs, 'IFEQ', String(expected)])) === 'OK';
    };
    const cas = createCompareAndSet(setIfEqual, scripts);
    const key = `cas-test:{${randomUUID()}}`;
    await command(['SET', key, 'acquired', 'PX', 60_000]);

    expect(await cas(key, 'done', 5000, 'something else')).toBe(false);
    expect(await command(['GET', key])).toBe('acquired');
    expect(await cas(key, 'done ✓', 5000, 'acquired')).toBe(true);
    expect(await command(['GET', key])).toBe('done ✓');
    const ttl = Number(await command(['PTTL', key]));
    expect(ttl).toBeGreaterThan(4000);
    expect(ttl).toBeLessThanOrEqual(5000);

    const missing = `cas-test:{${randomUUID()}}`;
    expect(await cas(missing, 'done', 5000, 'acquired')).toBe(false);
    expect(await command(['EXISTS', missing])).toBe(0);

    // A server with the condition is asked every time; one without it (Redis < 8.4) once.
    const hasCondition = natives.length === 3;
    expect(natives.length).toBe(hasCondition ? 3 : 1);
    await command(['DEL', key]);
  });

  it('passes on any other error of the conditional SET, and keeps asking', async () => {
    let asked = 0;
    const cas = createCompareAndSet(() => {
      asked++;
      return Promise.reject(new Error('connection lost'));
    }, scripts);
    await expect(cas('cas-test:{x}', 'v', 1000, 'e')).rejects.toThrow('connection lost');
    await expect(cas('cas-test:{x}', 'v', 1000, 'e')).rejects.toThrow('connection lost');
    expect(asked).toBe(2);
  });

  it('sends only the refused write to the script: another write in flight when it switched keeps its own error', async () => {
    const pending: { reject: (error: Error) => void }[] = [];
    const cas = createCompareAndSet(() => new Promise<boolean>((_resolve, reject) => pending.push({ reject })), scripts);
    const key = `cas-test:{${randomUUID()}}`;
    await command(['SET', key, 'acquired', 'PX', 60_000]);
    const refused = cas(key, 'done', 5000, 'acquired');
    const lost = cas(key, 'other', 5000, 'acquired');
    pending[0]!.reject(new Error('ERR syntax error'));
    expect(await refused).toBe(true);
    pending[1]!.reject(new Error('connection lost'));
    await expect(lost).rejects.toThrow('connection lost');
    // From then on the script writes, without asking for the condition.
    expect(await cas(key, 'again', 5000, 'done')).toBe(true);
    expect(pending).toHaveLength(2);
    expect(await command(['GET', key])).toBe('again');
    await command(['DEL', key]);
  });

  it('refuses a TTL that is no positive integer with the typed validation error, writing nothing', async () => {
    const cas = createCompareAndSet(() => Promise.reject(new Error('ERR syntax error')), scripts);
    const key = `cas-test:{${randomUUID()}}`;
    await command(['SET', key, 'acquired', 'PX', 60_000]);
    await expect(cas(key, 'done', 0, 'acquired')).rejects.toThrow(/E_FLIGHT_VALIDATION/);
    expect(await command(['GET', key])).toBe('acquired');
    await command(['DEL', key]);
  });
});
