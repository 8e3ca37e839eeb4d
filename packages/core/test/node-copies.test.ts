/**
 * Every copy of a value a node holds (L1, stale copies, the offer of a refresh a caller runs, in-process
 * joins) follows the same rules: nothing taken before a forget is handed out after it, one byte budget holds
 * them all, and a caller running a refresh itself never makes its node's other callers wait. Each case here
 * is a place where two features met and a caller got what it must never get.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createLruReplayCache, createMemoryCoordinator, type FlightResult, type StagePolicyInput } from '@flight/core';
import type { ForgetListener } from '@flight/core/adapter';
import { downCoordinator, singleFlights } from './helpers.js';

const create = singleFlights();
/** Fresh for 100 ms, then served stale while revalidating for a minute. */
const STALE: StagePolicyInput = {
  heartbeatIntervalMs: 500,
  takeoverAfterMs: 800,
  pollIntervalMs: 50,
  resultTtlMs: 100,
  l1: { enabled: false },
  stale: { whileRevalidateMs: 60_000 },
  guard: { retry: false, circuitBreaker: false, timeoutMs: 0 },
};

/** A supplier held until `release()`; `started` resolves when it is first called. */
function held<T>(value: T) {
  let release!: () => void;
  let markStarted!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  let runs = 0;
  const supplier = async () => {
    runs++;
    markStarted();
    await gate;
    return value;
  };
  return { supplier, started, release, runs: () => runs };
}

/** Waits until `value` is past its fresh time (100 ms) on the stage above. */
const pastFresh = () => sleep(150);

describe('node copies: forget × stale refresh', () => {
  it("a forget during a refresh its caller runs ('caller') stops the node handing out the old value", async () => {
    const node = create({ coordinator: createMemoryCoordinator(), mode: 'distributed', defaults: STALE });
    await node.execute('s', 'k', () => 'v1');
    await pastFresh();
    const refresh = held('v2');
    const refreshing = node.execute('s', 'k', refresh.supplier, { staleRefresh: 'caller' });
    await refresh.started;
    expect(await node.execute('s', 'k', () => 'unused')).toMatchObject({ value: 'v1', role: 'stale' });
    await node.forget('s', 'k');
    const after = await node.execute('s', 'k', () => 'v3');
    expect(after).toMatchObject({ value: 'v3', role: 'owner' });
    refresh.release();
    expect(await refreshing).toMatchObject({ value: 'v2', role: 'owner' });
  });

  it('the same in local mode', async () => {
    const node = create({ mode: 'local', defaults: STALE });
    await node.execute('s', 'k', () => 'v1');
    await pastFresh();
    const refresh = held('v2');
    const refreshing = node.execute('s', 'k', refresh.supplier, { staleRefresh: 'caller' });
    await refresh.started;
    expect(await node.execute('s', 'k', () => 'unused')).toMatchObject({ value: 'v1', role: 'stale' });
    await node.forget('s', 'k');
    expect(await node.execute('s', 'k', () => 'v3')).toMatchObject({ value: 'v3', role: 'local' });
    refresh.release();
    await refreshing;
  });

  it('a forgotten background refresh is not tried again by its guard', async () => {
    const node = create({
      mode: 'local',
      defaults: { ...STALE, guard: { retry: { maxAttempts: 3, initialDelayMs: 1, maxDelayMs: 1 }, circuitBreaker: false, timeoutMs: 0 } },
    });
    await node.execute('s', 'k', () => 'v1');
    await pastFresh();
    const failed = new Promise((resolve) => node.on('refresh-failed', resolve));
    const refresh = held(undefined);
    const broken = async () => {
      await refresh.supplier();
      throw Object.assign(new Error('upstream 502'), { status: 502 });
    };
    expect(await node.execute('s', 'k', broken)).toMatchObject({ value: 'v1', role: 'stale' });
    await refresh.started;
    await node.forget('s', 'k');
    refresh.release();
    await failed;
    expect(refresh.runs()).toBe(1);
  });
});

describe("node copies: staleRefresh 'caller' × this node's other callers", () => {
  it('callers arriving while the refresh is being acquired get the stale value at once, not the refresh', async () => {
    const node = create({ coordinator: createMemoryCoordinator(), mode: 'distributed', defaults: STALE });
    await node.execute('s', 'k', () => 'v1');
    await pastFresh();
    const refresh = held('v2');
    const settled: FlightResult<string>[] = [];
    let allButOne!: () => void;
    const othersDone = new Promise<void>((resolve) => (allButOne = resolve));
    const calls = Array.from({ length: 50 }, () =>
      node.execute('s', 'k', refresh.supplier, { staleRefresh: 'caller' }).then((result) => {
        settled.push(result);
        if (settled.length === 49) allButOne();
        return result;
      }),
    );
    // Without the fix the 49 others wait for the held refresh: this never resolves.
    await othersDone;
    expect(settled.map((r) => [r.value, r.role])).toEqual(Array(49).fill(['v1', 'stale']));
    refresh.release();
    const all = await Promise.all(calls);
    expect(all.filter((r) => r.role === 'owner').map((r) => r.value)).toEqual(['v2']);
    expect(refresh.runs()).toBe(1);
  });
});

describe('node copies: one byte budget', () => {
  it("stale copies count against the replay cache's byte bound, as L1 entries do", async () => {
    const big = 'x'.repeat(256 * 1024);
    const node = create({ mode: 'local', defaults: STALE, replayCache: createLruReplayCache({ maxBytes: 1024 * 1024 }) });
    for (let i = 0; i < 20; i++) await node.execute('s', `k${i}`, () => `${i}${big}`);
    await pastFresh();
    const roles: string[] = [];
    for (let i = 19; i >= 0; i--) roles.push((await node.execute('s', `k${i}`, () => 'new')).role);
    const stale = roles.filter((role) => role === 'stale').length;
    // 1 MiB holds at most four copies of 256 KiB; the most recently kept ones are served stale.
    expect(stale).toBeGreaterThan(0);
    expect(stale).toBeLessThanOrEqual(4);
    expect(roles.slice(0, stale)).toEqual(Array(stale).fill('stale'));
  });
});

describe('node copies: hybrid × stale × heard forgets', () => {
  it('keeps a distributed run’s copy for an outage only while it hears forgets, and drops it once it hears again', async () => {
    const state = { down: false };
    const listeners: ForgetListener[] = [];
    const memory = downCoordinator(createMemoryCoordinator(), state);
    const coordinator = new Proxy(memory, {
      get(target, prop, receiver) {
        if (prop !== 'listenForgets') return Reflect.get(target, prop, receiver);
        return (_ref: unknown, listener: ForgetListener) => {
          listeners.push(listener);
          queueMicrotask(() => listener.covered(true));
          return () => undefined;
        };
      },
    });
    const node = create({ coordinator, mode: 'hybrid', defaults: STALE, fallbackCooldownMs: 60_000 });
    const completed = () => new Promise((resolve) => node.on('completed', resolve));
    await node.execute('s', 'k', () => 'v1');
    await pastFresh();
    let refreshed = completed();
    expect(await node.execute('s', 'k', () => 'v2')).toMatchObject({ value: 'v1', role: 'stale' });
    await refreshed; // the flight's second run here: the node listens for its forgets from now on
    expect(listeners).toHaveLength(1);
    await pastFresh();
    refreshed = completed();
    expect(await node.execute('s', 'k', () => 'v3')).toMatchObject({ value: 'v2', role: 'stale' });
    await refreshed; // this refresh ran while the node heard forgets: its copy is kept for an outage
    state.down = true;
    for (const listener of listeners) listener.covered(false);
    await pastFresh();
    // Its refresh fails here, so the copy is not replaced meanwhile (and no refresh is tried for a while).
    const failed = new Promise((resolve) => node.on('refresh-failed', resolve));
    const broken = () => Promise.reject(Object.assign(new Error('upstream 502'), { status: 502 }));
    expect(await node.execute('s', 'k', broken)).toMatchObject({ value: 'v3', role: 'stale' });
    await failed;
    expect(await node.execute('s', 'k', broken)).toMatchObject({ value: 'v3', role: 'stale' });
    // Heard again: a forget may have been missed meanwhile, so the copy is no longer served.
    for (const listener of listeners) listener.covered(true);
    expect(await node.execute('s', 'k', () => 'v4')).toMatchObject({ value: 'v4', role: 'local' });
  });
});

describe('node copies: hybrid × L1 × an outage', () => {
  it('keeps nothing a hybrid node makes while cut off from Redis: a forget made after the outage reaches no copy of it', async () => {
    const state = { down: true };
    const memory = createMemoryCoordinator();
    const coordinator = new Proxy(downCoordinator(memory, state), {
      get(target, prop, receiver) {
        if (prop !== 'listenForgets') return Reflect.get(target, prop, receiver);
        // Listening on Redis: forgets are heard only while the node is connected.
        return (_ref: unknown, listener: ForgetListener) => {
          queueMicrotask(() => listener.covered(!state.down));
          return () => undefined;
        };
      },
    });
    const node = create({
      coordinator,
      mode: 'hybrid',
      fallbackCooldownMs: 100,
      defaults: { ...STALE, resultTtlMs: 60_000, l1: { enabled: true, ttlMs: 60_000 } },
    });
    expect(await node.execute('s', 'k', () => 'made in the outage')).toMatchObject({ role: 'local' });
    state.down = false;
    await sleep(200); // past the fallback cooldown: the node coordinates again
    await memory.forget({ stage: 's', key: 'k' }); // forgotten on another node
    expect(await node.execute('s', 'k', () => 'after the forget')).toMatchObject({ value: 'after the forget', role: 'owner' });
  });
});
