/**
 * Forget across the cluster (Go's `singleflight.Forget`) through SingleFlight over the memory coordinator:
 * several nodes share one coordinator, as processes share Redis (the Redis adapters run the same sequence
 * across real processes: tooling/redis-test-kit/src/forget-suite.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryCoordinator, createSingleFlight, FlightValidationError, type SingleFlight, type StagePolicyInput } from '@flight/core';

const FAST: StagePolicyInput = {
  heartbeatIntervalMs: 500,
  takeoverAfterMs: 800,
  pollIntervalMs: 50,
  l1: { enabled: true, ttlMs: 60_000 },
  guard: { retry: false, circuitBreaker: false, timeoutMs: 0 },
};
const instances: SingleFlight[] = [];

function cluster(n: number, stage: StagePolicyInput = {}) {
  const coordinator = createMemoryCoordinator();
  const nodes = Array.from({ length: n }, (_, i) =>
    createSingleFlight({ coordinator, mode: 'distributed', nodeId: `node-${i}`, defaults: { ...FAST, ...stage } }),
  );
  instances.push(...nodes);
  return { coordinator, nodes };
}

/** A supplier that signals when it starts and returns `value` once released. */
function gated(value: string) {
  let release!: () => void;
  let started!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const running = new Promise<void>((resolve) => (started = resolve));
  let runs = 0;
  const supplier = async () => {
    runs++;
    started();
    await gate;
    return value;
  };
  return { supplier, release, running, runs: () => runs };
}

afterEach(async () => {
  await Promise.all(instances.splice(0).map((sf) => sf.close()));
});

describe('forget across the cluster (memory coordinator)', () => {
  it("follows Go's Forget sequence; the forgotten run's callers get its value, nobody after the forget does", async () => {
    // A lease far longer than the test: the second run can only start because of the forget, not a takeover.
    const { coordinator, nodes } = cluster(3, { heartbeatIntervalMs: 20_000, takeoverAfterMs: 40_000 });
    const [a, b, c] = nodes as [SingleFlight, SingleFlight, SingleFlight];
    const joinedOnB: number[] = [];
    b.on('follower', (event) => joinedOnB.push(event.epoch));
    const first = gated('first');
    const firstCalls = [a.execute('s', 'k', first.supplier), a.execute('s', 'k', first.supplier)];
    await first.running;
    expect(await c.forget('s', 'k')).toBe(true);
    // The second call (another node) starts a new run instead of joining the first.
    const second = gated('second');
    const secondCall = b.execute('s', 'k', second.supplier);
    await second.running;
    expect(joinedOnB).toEqual([]);
    first.release();
    const firstResults = await Promise.all(firstCalls);
    expect(firstResults.map((r) => [r.value, r.role])).toEqual([
      ['first', 'owner'],
      ['first', 'follower'],
    ]);
    // The forgotten run's late completion was not stored, and not put in the owner node's L1.
    expect(await coordinator.readMeta({ stage: 's', key: 'k' })).toMatchObject({ status: 'RUNNING', ownerId: 'node-1' });
    // Third calls, after the first finished, on the first run's node and on another: they join the second run.
    const third = gated('third');
    const thirdCalls = [a.execute('s', 'k', third.supplier), c.execute('s', 'k', third.supplier)];
    second.release();
    const [secondResult, ...thirdResults] = await Promise.all([secondCall, ...thirdCalls]);
    expect(secondResult).toMatchObject({ value: 'second', role: 'owner' });
    expect(thirdResults.map((r) => [r.value, r.role, r.epoch])).toEqual([
      ['second', 'follower', secondResult.epoch],
      ['second', 'follower', secondResult.epoch],
    ]);
    expect(secondResult.epoch).toBeGreaterThan(firstResults[0]!.epoch!);
    expect([first.runs(), second.runs(), third.runs()]).toEqual([1, 1, 0]);
  });

  it("drops a stored result (and this node's L1 entry) so the next caller runs again", async () => {
    const { nodes } = cluster(2);
    const [a, b] = nodes as [SingleFlight, SingleFlight];
    expect(await a.run('s', 'stored', async () => 'v1')).toBe('v1');
    expect(await b.execute('s', 'stored', async () => 'never')).toMatchObject({ value: 'v1', role: 'replay' });
    expect(await b.execute('s', 'stored', async () => 'never')).toMatchObject({ value: 'v1', role: 'l1' });
    expect(await b.forget('s', 'stored')).toBe(true);
    expect(await b.execute('s', 'stored', async () => 'v2')).toMatchObject({ value: 'v2', role: 'owner' });
    // Nothing to forget.
    expect(await a.forget('s', 'never-ran')).toBe(false);
    await expect(a.forget('', 'k')).rejects.toBeInstanceOf(FlightValidationError);
  });

  it('a forgotten run that fails gives its own callers the failure and stores nothing', async () => {
    const { nodes } = cluster(2);
    const [a, b] = nodes as [SingleFlight, SingleFlight];
    let fail!: (error: Error) => void;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const call = a.execute('s', 'failing', () => {
      started();
      return new Promise<string>((_, reject) => (fail = reject));
    });
    await running;
    expect(await b.forget('s', 'failing')).toBe(true);
    fail(Object.assign(new Error('bad input'), { failureType: 'VALIDATION', code: 'E_BAD' }));
    await expect(call).rejects.toMatchObject({ code: 'E_FLIGHT_EXECUTION', errorType: 'VALIDATION', replayed: false });
    // A non-retryable failure of a forgotten run is not replayed: the next caller runs.
    expect(await b.execute('s', 'failing', async () => 'ok')).toMatchObject({ value: 'ok', role: 'owner' });
  });
});
