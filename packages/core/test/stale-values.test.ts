/**
 * Stale values (the stage option `stale`, RFC 5861 across the cluster) with the memory coordinator: past its
 * fresh time a stored result is served at once while exactly one refresh runs, in place of a failed run's
 * error within its error window, never to a caller that asks for a fresh value, and never after a forget.
 */
import { describe, expect, it } from 'vitest';
import { createMemoryCoordinator, FlightExecutionError, type StagePolicyInput } from '@flight/core';
import { type FlightCoordinator } from '@flight/core/adapter';
import { downCoordinator, singleFlights } from './helpers.js';

const create = singleFlights();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const BASE: StagePolicyInput = {
  heartbeatIntervalMs: 500,
  takeoverAfterMs: 800,
  pollIntervalMs: 50,
  resultTtlMs: 200,
  l1: { enabled: false },
  guard: { retry: false, circuitBreaker: false, timeoutMs: 0 },
};

function nodes(stale: StagePolicyInput['stale'], coordinator: FlightCoordinator = createMemoryCoordinator()) {
  const defaults = { ...BASE, stale };
  return [
    create({ coordinator, mode: 'distributed', nodeId: 'a', defaults }),
    create({ coordinator, mode: 'distributed', nodeId: 'b', defaults }),
  ] as const;
}

class ProviderDown extends Error {
  readonly status = 503;
}

describe('stale values', () => {
  it('past the fresh time: every caller gets the stale value at once while one refresh runs', async () => {
    const [a, b] = nodes({ whileRevalidateMs: 5000 });
    await a.execute('s', 'k', () => 'v1');
    await sleep(300);
    let runs = 0;
    // The refresh finishes only after every caller was answered: a caller that waited for it would hang.
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    const refresh = async () => {
      runs++;
      await finished;
      return 'v2';
    };
    const stored = new Promise<void>((resolve) => [a, b].forEach((node) => node.on('completed', (e) => e.key === 'k' && resolve())));
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).execute('s', 'k', refresh)));
    expect(results.map((r) => [r.value, r.role, r.shared])).toEqual(Array(20).fill(['v1', 'stale', true]));
    for (const r of results) expect(r.ageMs).toBeGreaterThanOrEqual(250);
    finish();
    await stored;
    expect(runs).toBe(1);
    expect(await b.execute('s', 'k', refresh)).toMatchObject({ value: 'v2', role: 'replay' });
    expect(runs).toBe(1);
  });

  it("staleRefresh 'caller': the call given the refresh runs it and waits, every other caller gets the stale value", async () => {
    const [a, b] = nodes({ whileRevalidateMs: 5000 });
    await a.execute('s', 'k', () => 'v1');
    await sleep(300);
    let runs = 0;
    const refresh = async () => {
      runs++;
      await sleep(200);
      return 'v2';
    };
    const first = a.execute('s', 'k', refresh, { staleRefresh: 'caller' });
    await sleep(50);
    const others = await Promise.all([a.execute('s', 'k', refresh, { staleRefresh: 'caller' }), b.execute('s', 'k', refresh)]);
    expect(others.map((r) => [r.value, r.role])).toEqual([
      ['v1', 'stale'],
      ['v1', 'stale'],
    ]);
    expect(await first).toMatchObject({ value: 'v2', role: 'owner' });
    expect(runs).toBe(1);
    await expect(a.execute('s', 'k', refresh, { staleRefresh: 'sometimes' as never })).rejects.toThrow(/staleRefresh/);
  });

  it('a caller that asks for a fresh value waits for the refresh', async () => {
    const [a, b] = nodes({ whileRevalidateMs: 5000 });
    await a.execute('s', 'k', () => 'v1');
    await sleep(300);
    let runs = 0;
    const refresh = async () => {
      runs++;
      await sleep(100);
      return 'v2';
    };
    const [stale, fresh] = await Promise.all([a.execute('s', 'k', refresh), a.execute('s', 'k', refresh, { fresh: true })]);
    expect(stale).toMatchObject({ value: 'v1', role: 'stale' });
    expect(fresh.value).toBe('v2');
    expect(await b.execute('s', 'k', refresh, { fresh: true })).toMatchObject({ value: 'v2', role: 'replay' });
    expect(runs).toBe(1);
  });

  it('a failed refresh: the stale value until its error window ends, one refresh per retry interval, then the failure', async () => {
    // Fresh for 0.2 s, then served while revalidating until 0.5 s and in place of errors until 1.1 s.
    const [a, b] = nodes({ whileRevalidateMs: 300, ifErrorMs: 900, retryAfterMs: 400 });
    const failed: string[] = [];
    a.on('refresh-failed', (e) => failed.push(e.errorType));
    b.on('refresh-failed', (e) => failed.push(e.errorType));
    const storedAt = Date.now();
    await a.execute('s', 'k', () => 'v1');
    await sleep(300);
    let runs = 0;
    const broken = async () => {
      runs++;
      throw new ProviderDown('upstream 503');
    };
    let served = 0;
    while (Date.now() < storedAt + 1000) {
      const results = await Promise.all([a.execute('s', 'k', broken), b.execute('s', 'k', broken)]);
      for (const r of results) expect(r).toMatchObject({ value: 'v1', role: 'stale' });
      served += results.length;
      await sleep(20);
    }
    expect(served).toBeGreaterThan(20);
    // One refresh at 0.3 s, the next once its failure's retry interval is over (0.7 s): two in 0.7 s.
    expect(runs).toBeGreaterThanOrEqual(2);
    expect(runs).toBeLessThanOrEqual(3);
    expect(failed.length).toBe(runs);
    expect(failed[0]).toBe('OVERLOAD'); // a 503
    await sleep(storedAt + 1550 - Date.now()); // past the error window and the last failure's retry interval
    await expect(a.execute('s', 'k', broken)).rejects.toBeInstanceOf(FlightExecutionError);
  });

  it('stale-if-error only: a run that fails is answered with the stored value while the window lasts', async () => {
    const [a, b] = nodes({ ifErrorMs: 5000 });
    await a.execute('s', 'k', () => 'v1');
    await sleep(300);
    let runs = 0;
    const broken = async () => {
      runs++;
      await sleep(100);
      throw new ProviderDown('upstream 503');
    };
    const startedAt = Date.now();
    const [owner, follower] = await Promise.all([a.execute('s', 'k', broken), b.execute('s', 'k', broken)]);
    // Past the fresh time without a revalidate window, callers wait for the run; its failure is answered stale.
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(90);
    expect(owner).toMatchObject({ value: 'v1', role: 'stale' });
    expect(follower).toMatchObject({ value: 'v1', role: 'stale' });
    expect(runs).toBe(1);
    // The failure is kept for the retry interval (5 s by default): no caller runs again meanwhile.
    expect(await b.execute('s', 'k', broken)).toMatchObject({ value: 'v1', role: 'stale' });
    expect(runs).toBe(1);
  });

  it('forget drops the stale copy: the next caller waits for a new run', async () => {
    const [a, b] = nodes({ whileRevalidateMs: 5000, ifErrorMs: 5000 });
    await a.execute('s', 'k', () => 'v1');
    await sleep(300);
    await b.forget('s', 'k');
    expect(await b.execute('s', 'k', () => 'v2')).toMatchObject({ value: 'v2', role: 'owner' });
  });

  it('a value whose staleFor says no windows drops the copy of the value before it', async () => {
    const [a] = nodes({ whileRevalidateMs: 5000 });
    await a.execute('s', 'k', () => 'v1');
    await sleep(300);
    const none = { staleFor: () => ({ whileRevalidateMs: 0 }) };
    expect(await a.execute('s', 'k', () => 'v2', { ...none, fresh: true })).toMatchObject({ value: 'v2', role: 'owner' });
    await sleep(300);
    expect(await a.execute('s', 'k', () => 'v3')).toMatchObject({ value: 'v3', role: 'owner' });
  });

  it('staleFor gives a stage without windows stale values, per value', async () => {
    const [a, b] = nodes(undefined);
    const staleFor = (value: unknown) => ({ whileRevalidateMs: value === 'v1' ? 5000 : 0 });
    await a.execute('s', 'k', () => 'v1', { staleFor });
    await sleep(300);
    expect(await b.execute('s', 'k', () => 'v2', { staleFor })).toMatchObject({ value: 'v1', role: 'stale' });
  });

  it('local mode: per node, the stale value at once while one refresh runs, and in place of a failed run', async () => {
    const local = create({
      mode: 'local',
      defaults: { ...BASE, l1: { enabled: true }, stale: { whileRevalidateMs: 5000, ifErrorMs: 5000, retryAfterMs: 300 } },
    });
    expect(local.servesStale).toBe(true);
    await local.execute('s', 'k', () => 'v1');
    await sleep(300);
    let runs = 0;
    const refresh = async () => {
      runs++;
      await sleep(100);
      return 'v2';
    };
    const herd = await Promise.all(Array.from({ length: 10 }, () => local.execute('s', 'k', refresh)));
    expect(herd.map((r) => [r.value, r.role])).toEqual(Array(10).fill(['v1', 'stale']));
    await sleep(150);
    expect(runs).toBe(1);
    expect(await local.execute('s', 'k', refresh)).toMatchObject({ value: 'v2' });
    await sleep(300);
    const failed: string[] = [];
    local.on('refresh-failed', (e) => failed.push(e.errorType));
    const broken = async () => {
      runs++;
      throw new ProviderDown('upstream 503');
    };
    expect(await local.execute('s', 'k', broken, { staleRefresh: 'caller' })).toMatchObject({ value: 'v2', role: 'stale' });
    expect(await local.execute('s', 'k', broken)).toMatchObject({ value: 'v2', role: 'stale' });
    expect(runs).toBe(2); // the failed refresh is not tried again for retryAfterMs
    expect(failed).toEqual(['OVERLOAD']);
    await local.forget('s', 'k');
    await expect(local.execute('s', 'k', broken)).rejects.toBeInstanceOf(FlightExecutionError);
  });

  it('hybrid mode with the coordinator down: the node serves the stale copies of its in-process runs', async () => {
    const state = { down: true };
    const coordinator = downCoordinator(createMemoryCoordinator(), state);
    const node = create({ mode: 'hybrid', coordinator, defaults: { ...BASE, stale: { whileRevalidateMs: 5000 } } });
    expect(await node.execute('s', 'k', () => 'v1')).toMatchObject({ value: 'v1', role: 'local' });
    await sleep(300);
    let runs = 0;
    const refresh = async () => {
      runs++;
      await sleep(100);
      return 'v2';
    };
    expect(await node.execute('s', 'k', refresh)).toMatchObject({ value: 'v1', role: 'stale' });
    await sleep(150);
    expect(runs).toBe(1);
  });

  it('refuses stale windows it could not serve', () => {
    const plain = createMemoryCoordinator();
    const withoutCopies: FlightCoordinator = { ...plain, keepsStaleCopies: false };
    expect(() => create({ coordinator: withoutCopies, stages: { s: { stale: { ifErrorMs: 1000 } } } })).toThrow(/keepsStaleCopies/);
    expect(() => create({ stages: { s: { stale: { whileRevalidateMS: 1000 } as never } } })).toThrow(/whileRevalidateMs/);
    expect(() => create({ stages: { s: { stale: { ifErrorMs: -1 } } } })).toThrow(/ifErrorMs/);
  });
});
