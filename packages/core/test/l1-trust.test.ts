/**
 * What L1 may hand out: never a value past the stored result's life, never a value after a forget of this
 * node resolved, and never more memory than `l1.maxBytes` allows (within 2×). Over the memory coordinator;
 * the Redis adapters run the same cases across processes (the Redis test kit).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { createLruReplayCache, createMemoryCoordinator, type StagePolicyInput } from '@flight/core';
import { type FlightCoordinator } from '@flight/core/adapter';
import { figure, singleFlights } from './helpers.js';

const create = singleFlights();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const BASE: StagePolicyInput = {
  heartbeatIntervalMs: 500,
  takeoverAfterMs: 800,
  pollIntervalMs: 50,
  l1: { enabled: true, ttlMs: 30_000 },
  guard: { retry: false, circuitBreaker: false, timeoutMs: 0 },
};

describe('an L1 entry never outlives the stored result it copies', () => {
  it("an owner's entry lives at most the stage's resultTtlMs", async () => {
    const sf = create({ coordinator: createMemoryCoordinator(), mode: 'distributed', defaults: { ...BASE, resultTtlMs: 200 } });
    expect(await sf.execute('s', 'k', () => 'old')).toMatchObject({ value: 'old', role: 'owner' });
    expect(await sf.execute('s', 'k', () => 'new')).toMatchObject({ value: 'old', role: 'l1' });
    await sleep(400);
    expect(await sf.execute('s', 'k', () => 'new')).toMatchObject({ value: 'new', role: 'owner' });
  });

  it('a local-mode entry lives at most resultTtlMs too', async () => {
    const sf = create({ mode: 'local', defaults: { ...BASE, resultTtlMs: 200 } });
    await sf.execute('s', 'k', () => 'old');
    await sleep(400);
    expect(await sf.execute('s', 'k', () => 'new')).toMatchObject({ value: 'new', role: 'local' });
  });

  it("a replay's entry lives only what the stored result has left", async () => {
    const coordinator = createMemoryCoordinator();
    const defaults = { ...BASE, resultTtlMs: 1000 };
    const a = create({ coordinator, mode: 'distributed', nodeId: 'a', defaults });
    const b = create({ coordinator, mode: 'distributed', nodeId: 'b', defaults });
    await a.execute('s', 'k', () => 'old');
    await sleep(700);
    // About 300 ms left on the stored result: B replays it and may keep it that long, not 30 s.
    expect(await b.execute('s', 'k', () => 'new')).toMatchObject({ value: 'old', role: 'replay' });
    expect(await b.execute('s', 'k', () => 'new')).toMatchObject({ value: 'old', role: 'l1' });
    await sleep(500);
    expect(await b.execute('s', 'k', () => 'new')).toMatchObject({ value: 'new', role: 'owner' });
  });
});

describe('an L1 hit tells the run it copies', () => {
  it("a hit reports the epoch of the run whose value it holds (owner's, follower's and replay's entries alike)", async () => {
    const coordinator = createMemoryCoordinator();
    const a = create({ coordinator, mode: 'distributed', nodeId: 'a', defaults: BASE });
    const b = create({ coordinator, mode: 'distributed', nodeId: 'b', defaults: BASE });
    const owned = await a.execute('s', 'k', () => 'v');
    expect(owned.epoch).toBeGreaterThan(0);
    expect(await a.execute('s', 'k', () => 'other')).toMatchObject({ role: 'l1', epoch: owned.epoch });
    expect(await b.execute('s', 'k', () => 'other')).toMatchObject({ role: 'replay', epoch: owned.epoch });
    expect(await b.execute('s', 'k', () => 'other')).toMatchObject({ role: 'l1', epoch: owned.epoch });
    const local = create({ mode: 'local', defaults: BASE });
    await local.execute('s', 'k', () => 'v');
    expect(await local.execute('s', 'k', () => 'other')).toMatchObject({ role: 'l1', epoch: undefined });
  });
});

/** The memory coordinator, with the first `complete` reply held until the `forget` reply: both come back together. */
function completeRepliesWithForget(inner: FlightCoordinator): FlightCoordinator {
  let releaseHeld: (() => void) | undefined;
  let completes = 0;
  return Object.assign(Object.create(inner) as FlightCoordinator, {
    async complete(...args: Parameters<FlightCoordinator['complete']>) {
      const reply = await inner.complete(...args);
      if (completes++ === 0) await new Promise<void>((resolve) => (releaseHeld = resolve));
      return reply;
    },
    async forget(ref: Parameters<FlightCoordinator['forget']>[0]) {
      const reply = await inner.forget(ref);
      releaseHeld?.();
      return reply;
    },
  });
}

describe('forget on this node', () => {
  it('once forget resolves, no caller on this node gets the old value, even when the complete landed just before it', async () => {
    let stale = 0;
    const runs = 30;
    for (let i = 0; i < runs; i++) {
      const coordinator = completeRepliesWithForget(createMemoryCoordinator());
      const sf = create({ coordinator, mode: 'distributed', defaults: BASE });
      let supplied!: () => void;
      const suppliedNow = new Promise<void>((resolve) => (supplied = resolve));
      const first = sf.execute('s', 'k', async () => {
        supplied();
        return 'old';
      });
      await suppliedNow;
      // The owner's complete has landed (its reply is held); the forget comes right after it.
      await sleep(5);
      await sf.forget('s', 'k');
      const after = await sf.execute('s', 'k', () => 'new');
      if (after.value !== 'new') stale++;
      expect(await first).toMatchObject({ value: 'old', role: 'owner' });
    }
    figure('forget-then-read-same-node', { runs, stale });
    expect(stale).toBe(0);
  });
});

/** Heap used after full collections. */
function heapUsed(): number {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

describe("L1's byte bound bounds memory", () => {
  it('a 16 MiB L1 filled with compressible results holds under 32 MiB of heap', async () => {
    const maxBytes = 16 * 1024 * 1024;
    const before = heapUsed();
    const sf = create({
      coordinator: createMemoryCoordinator(),
      mode: 'distributed',
      replayCache: createLruReplayCache({ maxBytes }),
      defaults: { ...BASE, resultTtlMs: 60_000, maxResultBytes: 8 * 1024 * 1024 },
    });
    // 1 MiB strings and 40k-element arrays of small objects: each compresses to a few KB.
    for (let i = 0; i < 60; i++) {
      await sf.execute('s', `text-${i}`, () => `${i}:`.padEnd(1024 * 1024, 'x'));
      await sf.execute('s', `rows-${i}`, () => Array.from({ length: 40_000 }, (_, n) => ({ n: n % 7, tag: 'row' })));
    }
    const held = heapUsed() - before;
    figure('l1-heap-for-16-mib-bound', { maxBytes, heldBytes: held, ratio: +(held / maxBytes).toFixed(2) });
    expect(held).toBeLessThan(2 * maxBytes);
    // And the cache still serves what it keeps.
    expect((await sf.execute('s', 'rows-59', () => [])).role).toBe('l1');
  });
});
