import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onFreePorts, PortTakenError, startRedisServer, type RedisServer } from '@flight/test-servers';

describe('servers of the tests on ports another process may take', () => {
  let holder: RedisServer;
  beforeAll(async () => {
    holder = await startRedisServer();
  });
  afterAll(async () => {
    await holder?.stop();
  });

  it('a server whose port was taken fails with PortTakenError from its own log, not with the answer of the server holding it', async () => {
    const started = startRedisServer({ port: holder.port });
    await expect(started).rejects.toBeInstanceOf(PortTakenError);
    await expect(started).rejects.toMatchObject({ code: 'E_TEST_PORT_TAKEN', port: holder.port, detail: expect.stringMatching(/in use/) });
    expect(await holder.command('PING')).toBe('PONG');
  });

  it('onFreePorts starts again on fresh ports when a port was taken, and gives up on any other error', async () => {
    const tried: number[][] = [];
    const ports = await onFreePorts(2, async (picked) => {
      tried.push(picked);
      if (tried.length === 1) throw new PortTakenError(picked[0]!, 'Address already in use');
      return picked;
    });
    expect(tried).toHaveLength(2);
    expect(ports).toBe(tried[1]);
    expect(new Set(ports).size).toBe(2);
    const other = new Error('no such binary');
    let calls = 0;
    await expect(
      onFreePorts(1, async () => {
        calls++;
        throw other;
      }),
    ).rejects.toBe(other);
    expect(calls).toBe(1);
  });
});
