/**
 * Issue 11 ("also fix"): an already-aborted caller never starts a flight; an owner that gives up after
 * `maxAttempts` releases the lease it holds; a heartbeat that races `complete` is not a lost lease.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createMemoryCoordinator,
  createSingleFlight,
  FlightAbortedError,
  FlightFencedError,
  type FlightEventMap,
  type SingleFlight,
  type SingleFlightOptions,
} from '@flight/core';
import { systemClock, type AcquireInput, type FlightCoordinator } from '@flight/core/adapter';
import { createManualClock } from '@flight/core/testing';
import { setTimeout as sleep } from 'node:timers/promises';

const FAST = {
  heartbeatIntervalMs: 500,
  takeoverAfterMs: 800,
  pollIntervalMs: 50,
  guard: { retry: false as const, circuitBreaker: false as const, timeoutMs: 0 },
};
const LEASE = { takeoverAfterMs: 800, leaseTtlMs: 1600, maxRunMs: 60_000 };
const created: SingleFlight[] = [];
const make = (options: SingleFlightOptions) => {
  const sf = createSingleFlight({ mode: 'distributed', ...options, defaults: { ...FAST, ...options.defaults } });
  created.push(sf);
  return sf;
};
afterEach(async () => {
  await Promise.all(created.splice(0).map((sf) => sf.close()));
});

function record<E extends keyof FlightEventMap>(sf: SingleFlight, event: E) {
  const seen: FlightEventMap[E][] = [];
  sf.on(event, (payload) => seen.push(payload));
  return seen;
}

describe('owner edges', () => {
  it('a caller whose signal is already aborted gets FlightAbortedError at once and starts no flight', async () => {
    const coordinator = createMemoryCoordinator();
    const sf = make({ coordinator });
    const controller = new AbortController();
    controller.abort(new Error('client went away'));
    const key = randomUUID();
    let runs = 0;
    await expect(sf.execute('eval', key, async () => ++runs, { signal: controller.signal })).rejects.toBeInstanceOf(FlightAbortedError);
    await sleep(20);
    expect(runs).toBe(0);
    expect(await coordinator.readMeta({ stage: 'eval', key })).toBeNull();
  });

  it('an owner that gives up after maxAttempts releases the lease it was just given (FAILED, retryable)', async () => {
    const clock = createManualClock(); // the coordinator's clock: the test moves lease time
    const coordinator = createMemoryCoordinator({ clock });
    const [a, b] = [
      make({ coordinator, nodeId: 'a', defaults: { maxAttempts: 1 } }),
      make({ coordinator, nodeId: 'b', defaults: { maxAttempts: 1 } }),
    ];
    const key = randomUUID();
    const ref = { stage: 'eval', key };
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const first = a.execute('eval', key, async () => {
      await gate;
      return 'late';
    });
    await sleep(20);
    await clock.advance(1000); // a's lease lapses (no heartbeat within takeoverAfterMs, coordinator time)
    const busy = Object.assign(new Error('busy'), { status: 503 });
    await expect(b.execute('eval', key, () => Promise.reject(busy))).rejects.toMatchObject({ errorType: 'OVERLOAD', retryable: true });
    release();
    // a's completion is fenced; its call re-enters, is handed a newer epoch, but has no attempt left.
    await expect(first).rejects.toBeInstanceOf(FlightFencedError);
    expect(await coordinator.readMeta(ref)).toMatchObject({ ownerId: 'a', status: 'FAILED', retryable: true });
    const next = await coordinator.acquire({ ...ref, ...LEASE, ownerId: 'c', ownerToken: 'c-token' });
    expect(next.outcome).toBe('OWNER_TAKEOVER'); // at once, not after takeoverAfterMs
  });

  it('a heartbeat tick that races a slow complete reply emits no lease-lost', async () => {
    const memory = createMemoryCoordinator();
    // complete lands at once; its reply arrives 700 ms later, after a heartbeat tick (500 ms) met SUCCEEDED.
    const slowReply = new Proxy(memory, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (prop !== 'complete') return typeof value === 'function' ? value.bind(target) : value;
        return async (...args: unknown[]) => {
          const reply = await value.apply(target, args);
          await sleep(700);
          return reply;
        };
      },
    }) as FlightCoordinator;
    const sf = make({ coordinator: slowReply });
    const lost = record(sf, 'lease-lost');
    expect(await sf.execute('eval', randomUUID(), async () => 'v')).toMatchObject({ value: 'v', role: 'owner' });
    expect(lost).toEqual([]);
  });

  it('an owner that reads its acquire reply after its lease lapsed (its process stalled) confirms the lease before its supplier runs', async () => {
    // One clock for both nodes and the coordinator: a stall of A's process is time passing for everyone.
    let stalledFor = 0;
    const clock = { ...systemClock, now: () => Date.now() + stalledFor };
    const memory = createMemoryCoordinator({ clock });
    let acquired!: () => void;
    const acquireRan = new Promise<void>((resolve) => (acquired = resolve));
    let wake!: () => void;
    const awake = new Promise<void>((resolve) => (wake = resolve));
    // What A does first once awake: confirm its lease, or run its supplier.
    let acted!: () => void;
    const aActed = new Promise<void>((resolve) => (acted = resolve));
    // A's acquire runs on the coordinator at once; A reads its reply only when it wakes.
    const stalled = new Proxy(memory, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (prop === 'markRunning')
          return (...args: Parameters<FlightCoordinator['markRunning']>) => (acted(), target.markRunning(...args));
        if (prop !== 'acquire') return typeof value === 'function' ? value.bind(target) : value;
        return async (input: AcquireInput) => {
          const reply = await target.acquire(input);
          acquired();
          await awake;
          return reply;
        };
      },
    }) as FlightCoordinator;
    const a = make({ coordinator: stalled, nodeId: 'a', clock });
    const b = make({ coordinator: memory, nodeId: 'b', clock });
    const key = randomUUID();
    const runs: string[] = [];
    const first = a.execute('eval', key, async () => {
      runs.push('a');
      acted();
      return 'from a';
    });
    await acquireRan;
    stalledFor = LEASE.leaseTtlMs + 1000; // A's lease lapsed while its process stood still
    let finish!: () => void;
    const finishing = new Promise<void>((resolve) => (finish = resolve));
    let started!: () => void;
    const bStarted = new Promise<void>((resolve) => (started = resolve));
    const second = b.execute('eval', key, async () => {
      runs.push('b');
      started();
      await finishing;
      return 'from b';
    });
    await bStarted;
    wake(); // A reads its reply while B's run goes on
    await aActed;
    finish();
    expect(await second).toMatchObject({ value: 'from b', role: 'owner' });
    expect(await first).toMatchObject({ value: 'from b', role: 'follower' });
    expect(runs).toEqual(['b']);
  });

  it('an owner whose coordinator renewed the lease while the acquire took long (leaseSentAgoMs) runs at once, without another renewal', async () => {
    let slowFor = 0;
    const clock = { ...systemClock, now: () => Date.now() + slowFor };
    const memory = createMemoryCoordinator({ clock });
    const renewals: string[] = [];
    // The acquire takes 5 s (replicas acknowledging it, say); the coordinator renewed the lease just before answering.
    const slow = new Proxy(memory, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (prop === 'markRunning') {
          return (...args: Parameters<FlightCoordinator['markRunning']>) => (renewals.push('markRunning'), target.markRunning(...args));
        }
        if (prop !== 'acquire') return typeof value === 'function' ? value.bind(target) : value;
        return async (input: AcquireInput) => {
          slowFor += 5000;
          return { ...(await target.acquire(input)), leaseSentAgoMs: 0 };
        };
      },
    }) as FlightCoordinator;
    const sf = make({ coordinator: slow, nodeId: 'a', clock });
    expect(await sf.execute('eval', randomUUID(), async () => 'ran')).toMatchObject({ value: 'ran', role: 'owner' });
    expect(renewals).toEqual([]);
  });
});
