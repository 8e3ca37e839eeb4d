/**
 * A call's `resultTtlMs` option: the run's result is reused by later callers at most that long (a number,
 * or what a function of the value says, such as an HTTP response's freshness), in the coordinator and in
 * L1, while callers that joined the run get its value whatever it says.
 */
import { describe, expect, it } from 'vitest';
import { createMemoryCoordinator, FlightValidationError, type StagePolicyInput } from '@flight/core';
import { singleFlights } from './helpers.js';

const create = singleFlights();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const BASE: StagePolicyInput = {
  heartbeatIntervalMs: 500,
  takeoverAfterMs: 800,
  pollIntervalMs: 50,
  resultTtlMs: 60_000,
  l1: { enabled: true, ttlMs: 30_000 },
  guard: { retry: false, circuitBreaker: false, timeoutMs: 0 },
};

function twoNodes() {
  const coordinator = createMemoryCoordinator();
  return [
    create({ coordinator, mode: 'distributed', nodeId: 'a', defaults: BASE }),
    create({ coordinator, mode: 'distributed', nodeId: 'b', defaults: BASE }),
  ] as const;
}

describe("a call's resultTtlMs", () => {
  it('keeps the stored result and its L1 copies no longer than asked (a number)', async () => {
    const [a, b] = twoNodes();
    expect(await a.execute('s', 'k', () => 'old', { resultTtlMs: 600 })).toMatchObject({ value: 'old', role: 'owner' });
    expect(await b.execute('s', 'k', () => 'new')).toMatchObject({ value: 'old', role: 'replay' });
    expect(await a.execute('s', 'k', () => 'new')).toMatchObject({ value: 'old', role: 'l1' });
    await sleep(800);
    // The stage keeps results a minute; this run's was kept 600 ms: both nodes run again.
    expect(await a.execute('s', 'k', () => 'new-a')).toMatchObject({ value: 'new-a', role: 'owner' });
  });

  it('reads a function of the value, at store time and for every L1 copy', async () => {
    const [a, b] = twoNodes();
    const seen: unknown[] = [];
    const ttl = (value: unknown) => {
      seen.push(value);
      return (value as { freshMs: number }).freshMs;
    };
    await a.execute('s', 'k', () => ({ freshMs: 600 }), { resultTtlMs: ttl });
    expect(seen).toEqual([{ freshMs: 600 }, { freshMs: 600 }]); // stored, then the owner's L1 copy
    expect(await b.execute('s', 'k', () => ({ freshMs: 0 }), { resultTtlMs: ttl })).toMatchObject({ role: 'replay' });
    await sleep(800);
    expect(await b.execute('s', 'k', () => ({ freshMs: 1 }), { resultTtlMs: ttl })).toMatchObject({ value: { freshMs: 1 }, role: 'owner' });
    // B's run was kept 1 ms: a moment later A runs it again.
    await sleep(20);
    expect(await a.execute('s', 'k', () => ({ freshMs: 2 }))).toMatchObject({ role: 'owner' });
  });

  it('hands the run to every caller that joined it, even when nothing may be reused after it', async () => {
    const [a, b] = twoNodes();
    let runs = 0;
    const supplier = async () => {
      runs++;
      await sleep(100);
      return 'once';
    };
    const options = { resultTtlMs: () => 0 };
    const results = await Promise.all([
      ...Array.from({ length: 5 }, () => a.execute('s', 'k', supplier, options)),
      ...Array.from({ length: 5 }, async () => (await sleep(20), b.execute('s', 'k', supplier, options))),
    ]);
    expect(runs).toBe(1);
    expect(results.every((result) => result.value === 'once')).toBe(true);
    expect(results.filter((result) => result.role === 'follower')).toHaveLength(9);
    await sleep(5);
    // Not reused after the run: the next caller, on either node, runs it again (L1 kept nothing either).
    expect(await a.execute('s', 'k', () => 'again')).toMatchObject({ value: 'again', role: 'owner' });
  });

  it('counts a function that throws or returns no number as "not reused" (1 ms), undefined as the stage\'s', async () => {
    const [a] = twoNodes();
    await a.execute('s', 'k0', () => 'v', { resultTtlMs: () => undefined });
    await a.execute('s', 'k1', () => 'v', { resultTtlMs: () => Number.NaN });
    await a.execute('s', 'k2', () => 'v', {
      resultTtlMs: () => {
        throw new Error('bad');
      },
    });
    await sleep(5);
    expect(await a.execute('s', 'k0', () => 'w')).toMatchObject({ value: 'v', role: 'l1' });
    expect(await a.execute('s', 'k1', () => 'w')).toMatchObject({ value: 'w', role: 'owner' });
    expect(await a.execute('s', 'k2', () => 'w')).toMatchObject({ value: 'w', role: 'owner' });
  });

  it('applies in local mode, to the L1 copy', async () => {
    const sf = create({ mode: 'local', defaults: BASE });
    await sf.execute('s', 'k', () => 'old', { resultTtlMs: 200 });
    expect(await sf.execute('s', 'k', () => 'new')).toMatchObject({ value: 'old', role: 'l1' });
    await sleep(300);
    expect(await sf.execute('s', 'k', () => 'new')).toMatchObject({ value: 'new', role: 'local' });
  });

  it('is read from the chunks of a streamed run', async () => {
    const [a, b] = twoNodes();
    async function* chunks() {
      yield { freshMs: 200 };
      yield 'body';
    }
    const options = { resultTtlMs: (list: readonly unknown[]) => (list[0] as { freshMs: number }).freshMs };
    expect(await a.executeStream('s', 'k', chunks, options).result()).toMatchObject({ role: 'owner' });
    expect(await b.executeStream('s', 'k', chunks, options).result()).toMatchObject({ role: 'replay' });
    await sleep(350);
    expect(await b.executeStream('s', 'k', chunks, options).result()).toMatchObject({ role: 'owner' });
  });

  it('refuses a number that is not a positive integer, typed', async () => {
    const [a] = twoNodes();
    for (const bad of [0, -1, 1.5, Number.NaN, '100' as unknown as number]) {
      await expect(a.execute('s', 'k', () => 'v', { resultTtlMs: bad })).rejects.toBeInstanceOf(FlightValidationError);
    }
  });
});
