import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { downCoordinator } from './helpers.js';
import {
  createMemoryCoordinator,
  createMemorySessionLock,
  createSingleFlight,
  FlightAbortedError,
  FlightCancelledError,
  FlightCoordinationError,
  FlightExecutionError,
  FlightLeaseLostError,
  FlightValidationError,
  FlightWaitTimeoutError,
  type FlightEventMap,
  type SingleFlight,
  type SingleFlightOptions,
  type StagePolicyInput,
} from '@flight/core';
import { type FlightCoordinator, systemClock } from '@flight/core/adapter';

const FAST: StagePolicyInput = {
  heartbeatIntervalMs: 500,
  takeoverAfterMs: 800,
  pollIntervalMs: 50,
  guard: { retry: false, circuitBreaker: false, timeoutMs: 0 },
};
const LEASE = { takeoverAfterMs: 800, leaseTtlMs: 1600, maxRunMs: 60_000 };

const instances: SingleFlight[] = [];

function cluster(n: number, { stage, ...options }: Partial<SingleFlightOptions> & { stage?: StagePolicyInput } = {}) {
  const coordinator = options.coordinator ?? createMemoryCoordinator();
  const nodes = Array.from({ length: n }, (_, i) =>
    createSingleFlight({
      coordinator,
      mode: 'distributed',
      nodeId: `node-${i}`,
      defaults: { ...FAST, ...stage },
      ...options,
    }),
  );
  instances.push(...nodes);
  return { coordinator, nodes };
}

function record<E extends keyof FlightEventMap>(sf: SingleFlight, event: E) {
  const seen: FlightEventMap[E][] = [];
  sf.on(event, (payload) => seen.push(payload));
  return seen;
}

afterEach(async () => {
  await Promise.all(instances.splice(0).map((sf) => sf.close()));
});

describe('SingleFlight (distributed over a shared coordinator)', () => {
  it('runs the supplier once for many callers on several nodes; everyone gets the same value', async () => {
    const { nodes } = cluster(3);
    let runs = 0;
    const supplier = async () => {
      runs++;
      await sleep(100);
      return { score: 8, at: 'once' };
    };
    const key = randomUUID();
    const completed = nodes.map((node) => record(node, 'completed'));
    const results = await Promise.all(Array.from({ length: 150 }, (_, i) => nodes[i % 3]!.execute('eval', key, supplier)));
    expect(runs).toBe(1);
    // The owner learns, from the atomic completion, that the two other nodes joined its run.
    expect(completed.flat()).toEqual([expect.objectContaining({ key, followers: 2 })]);
    expect(new Set(results.map((r) => JSON.stringify(r.value)))).toEqual(new Set(['{"score":8,"at":"once"}']));
    const roles = results.map((r) => r.role);
    expect(roles.filter((r) => r === 'owner')).toHaveLength(1); // the one caller whose supplier ran
    expect(roles.filter((r) => r === 'follower')).toHaveLength(149);
    expect(results.every((r) => r.shared)).toBe(true);
    expect(new Set(results.map((r) => r.epoch)).size).toBe(1);
  });

  it('returns a follower from the result carried by the terminal event: one acquire, no second read', async () => {
    const inner = createMemoryCoordinator();
    const calls = { acquire: 0 };
    const coordinator: FlightCoordinator = { ...inner, acquire: (input) => (calls.acquire++, inner.acquire(input)) };
    const { nodes } = cluster(2, { coordinator });
    const key = randomUUID();
    const owner = nodes[0]!.execute('eval', key, async () => {
      await sleep(50);
      return { text: 'a b  c ✓' };
    });
    await sleep(10);
    const before = calls.acquire;
    const follower = await nodes[1]!.execute('eval', key, async () => 'never');
    expect(follower).toMatchObject({ value: { text: 'a b  c ✓' }, role: 'follower', shared: true });
    expect(calls.acquire - before).toBe(1);
    expect((await owner).value).toEqual({ text: 'a b  c ✓' });
  });

  it('verifies a result carried by the event with the codec and reads the stored one when it does not verify', async () => {
    const inner = createMemoryCoordinator();
    const calls = { acquire: 0 };
    const coordinator: FlightCoordinator = {
      ...inner,
      acquire: (input) => (calls.acquire++, inner.acquire(input)),
      waitForTerminal: async (ref, options) => {
        const event = await inner.waitForTerminal(ref, options);
        return event?.result === undefined ? event : { ...event, result: `${event.result.slice(0, -4)}AAAA` };
      },
    };
    const { nodes } = cluster(2, { coordinator });
    const key = randomUUID();
    const owner = nodes[0]!.execute('eval', key, async () => {
      await sleep(50);
      return { n: 42 };
    });
    await sleep(10);
    const before = calls.acquire;
    const follower = await nodes[1]!.execute('eval', key, async () => 'never');
    expect(follower).toMatchObject({ value: { n: 42 }, role: 'follower' });
    expect(calls.acquire - before).toBe(2);
    await owner;
  });

  it('replays a stored success to later callers (replay), then serves from L1', async () => {
    const { nodes } = cluster(2);
    const key = randomUUID();
    let runs = 0;
    const first = await nodes[0]!.execute('eval', key, async () => ++runs);
    expect(first).toMatchObject({ value: 1, role: 'owner', shared: false });
    const replay = await nodes[1]!.execute('eval', key, async () => ++runs);
    expect(replay).toMatchObject({ value: 1, role: 'replay', shared: true });
    const l1 = await nodes[1]!.execute('eval', key, async () => ++runs);
    expect(l1).toMatchObject({ value: 1, role: 'l1', shared: true });
    expect(runs).toBe(1);
  });

  it('skips L1 for stages that turn it off', async () => {
    const { nodes } = cluster(1, { stages: { demeanor: { ...FAST, l1: { enabled: false } } } });
    const key = randomUUID();
    await nodes[0]!.execute('demeanor', key, async () => 'v');
    expect((await nodes[0]!.execute('demeanor', key, async () => 'w')).role).toBe('replay');
  });

  it('replays a non-retryable failure to every caller without running again', async () => {
    const { nodes } = cluster(2);
    const key = randomUUID();
    let runs = 0;
    const supplier = async () => {
      runs++;
      await sleep(50);
      throw Object.assign(new Error('bad answer format'), { status: 400 });
    };
    const settled = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => nodes[i % 2]!.execute('eval', key, supplier)));
    expect(runs).toBe(1);
    for (const outcome of settled) {
      expect(outcome.status).toBe('rejected');
      const error = (outcome as PromiseRejectedResult).reason as FlightExecutionError;
      expect(error).toBeInstanceOf(FlightExecutionError);
      expect(error).toMatchObject({ code: 'E_FLIGHT_EXECUTION', errorType: 'VALIDATION', retryable: false });
    }
    const replayed = settled.map((o) => ((o as PromiseRejectedResult).reason as FlightExecutionError).replayed);
    expect(replayed.filter(Boolean)).toHaveLength(10);
    await expect(nodes[1]!.execute('eval', key, supplier)).rejects.toMatchObject({ errorType: 'VALIDATION', replayed: true });
    expect(runs).toBe(1);
  });

  it('lets the next caller take over after a retryable failure', async () => {
    const { nodes } = cluster(2);
    const key = randomUUID();
    const takeovers = record(nodes[1]!, 'takeover');
    await expect(
      nodes[0]!.execute('eval', key, async () => {
        throw Object.assign(new Error('upstream 502'), { status: 502 });
      }),
    ).rejects.toMatchObject({ errorType: 'PROVIDER', retryable: true, replayed: false });
    const next = await nodes[1]!.execute('eval', key, async () => 'recovered');
    expect(next).toMatchObject({ value: 'recovered', role: 'owner' });
    expect(takeovers).toHaveLength(1);
  });

  it('takes over from an owner that stopped heartbeating (dead node)', async () => {
    const { coordinator, nodes } = cluster(1);
    const key = randomUUID();
    // Its lease outlasts the test: only the silent heartbeat (takeoverAfterMs) lets another node take over.
    const lease = { ...LEASE, leaseTtlMs: 3_600_000 };
    const ghost = await coordinator.acquire({ stage: 'eval', key, ...lease, ownerId: 'dead-node', ownerToken: 'ghost' });
    await coordinator.markRunning({ stage: 'eval', key, ownerId: 'dead-node', ownerToken: 'ghost', epoch: ghost.meta.epoch }, lease);
    const started = Date.now();
    const result = await nodes[0]!.execute('eval', key, async () => 'taken over');
    expect(result).toMatchObject({ value: 'taken over', role: 'owner' });
    expect(result.epoch).toBeGreaterThan(ghost.meta.epoch);
    expect(Date.now() - started).toBeGreaterThanOrEqual(700); // not before the heartbeat went silent
  });

  it('stops renewing a stuck owner (progress rule): its run is abandoned and a follower takes over at once', async () => {
    // Takeover by heartbeat age and polling both lie beyond the test's timeout: only the failure record can wake B.
    const { nodes } = cluster(2, {
      stage: { stallTimeoutMs: 600, takeoverAfterMs: 600_000, leaseTtlMs: 1_200_000, pollIntervalMs: 600_000 },
    });
    const [a, b] = nodes as [SingleFlight, SingleFlight];
    const key = randomUUID();
    const lost = record(a, 'lease-lost');
    let stuckSignal: AbortSignal | undefined;
    let unstick!: () => void;
    const stuck = a.execute('eval', key, async (ctx) => {
      stuckSignal = ctx.signal;
      ctx.progress();
      await new Promise<void>((resolve) => (unstick = resolve)); // ignores its signal
      return 'stale result';
    });
    await sleep(50);
    const fresh = await b.execute('eval', key, async () => 'fresh result');
    expect(fresh).toMatchObject({ value: 'fresh result', role: 'owner' });
    expect(lost.map((e) => e.reason)).toEqual(['stalled']);
    expect(stuckSignal?.aborted).toBe(true);
    expect(stuckSignal?.reason).toBeInstanceOf(FlightLeaseLostError);
    await expect(stuck).rejects.toMatchObject({ errorType: 'TIMEOUT', errorCode: 'E_FLIGHT_LEASE_LOST', retryable: true });
    unstick();
    await sleep(10);
    expect((await b.execute('eval', key, async () => 'x')).value).toBe('fresh result');
  });

  it('fences an owner whose lease was taken while it was paused: its late completion is refused', async () => {
    let skew = 0;
    const coordinator = createMemoryCoordinator({ clock: { ...systemClock, now: () => Date.now() + skew } });
    const { nodes } = cluster(2, { coordinator });
    const [a, b] = nodes as [SingleFlight, SingleFlight];
    const key = randomUUID();
    const fenced = record(a, 'fenced');
    let resume!: () => void;
    const paused = a.execute('eval', key, async () => {
      await new Promise<void>((resolve) => (resume = resolve));
      return 'stale result';
    });
    await sleep(30);
    skew = 5000; // to the coordinator, A has been silent for 5 s (as if its process was paused)
    const fresh = await b.execute('eval', key, async () => 'fresh result');
    expect(fresh).toMatchObject({ value: 'fresh result', role: 'owner' });
    resume(); // A wakes up before its next heartbeat and tries to complete
    const late = await paused;
    expect(fenced.map((e) => e.operation)).toEqual(['complete']);
    expect(late).toMatchObject({ value: 'fresh result', role: 'follower' });
    expect(await coordinator.readResult({ stage: 'eval', key })).toContain('.');
    expect((await b.execute('eval', key, async () => 'x')).value).toBe('fresh result');
  });

  it('expires a run past its max run time and wakes followers to take over at once', async () => {
    // Polling and takeover by heartbeat age lie beyond the test's timeout: only the EXPIRED event can wake B.
    const { nodes } = cluster(2, { stage: { maxRunMs: 1000, takeoverAfterMs: 600_000, leaseTtlMs: 1_200_000, pollIntervalMs: 600_000 } });
    const [a, b] = nodes as [SingleFlight, SingleFlight];
    const key = randomUUID();
    const lost = record(a, 'lease-lost');
    void a.execute('eval', key, () => new Promise(() => {})).catch(() => {});
    await sleep(50);
    const result = await b.execute('eval', key, async () => 'after expiry');
    expect(result).toMatchObject({ value: 'after expiry', role: 'owner' });
    expect(lost.map((e) => e.reason)).toEqual(['max-run-time']);
  });

  it('cancels a flight cluster-wide: the owner aborts, followers and the owner callers get FlightCancelledError', async () => {
    const { nodes } = cluster(2);
    const [a, b] = nodes as [SingleFlight, SingleFlight];
    const key = randomUUID();
    let ownerSignal: AbortSignal | undefined;
    const owner = a.execute('eval', key, (ctx) => {
      ownerSignal = ctx.signal;
      return new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)));
    });
    await sleep(30);
    const follower = b.execute('eval', key, async () => 'never');
    await sleep(30);
    expect(await b.cancel('eval', key, 'interview ended')).toBe(true);
    await expect(follower).rejects.toBeInstanceOf(FlightCancelledError);
    await expect(owner).rejects.toBeInstanceOf(FlightCancelledError);
    expect(ownerSignal?.aborted).toBe(true);
    expect(await b.cancel('eval', key)).toBe(false);
  });

  it('lets one caller give up without disturbing the flight for the others', async () => {
    const { nodes } = cluster(2);
    const key = randomUUID();
    let runs = 0;
    const supplier = async () => {
      runs++;
      await sleep(150);
      return 'done';
    };
    const ownerCaller = new AbortController();
    const followerCaller = new AbortController();
    const owner = nodes[0]!.execute('eval', key, supplier, { signal: ownerCaller.signal });
    await sleep(20);
    const follower = nodes[1]!.execute('eval', key, supplier, { signal: followerCaller.signal });
    const patient = nodes[1]!.execute('eval', key, supplier);
    ownerCaller.abort();
    followerCaller.abort();
    await expect(owner).rejects.toBeInstanceOf(FlightAbortedError);
    await expect(follower).rejects.toBeInstanceOf(FlightAbortedError);
    expect(await patient).toMatchObject({ value: 'done', role: 'follower' });
    expect(runs).toBe(1);
  });

  it('gives a typed wait timeout when the owner never finishes', async () => {
    const { coordinator, nodes } = cluster(1, { stage: { waitTimeoutMs: 300 } });
    const key = randomUUID();
    const ghost = await coordinator.acquire({ stage: 'eval', key, ...LEASE, ownerId: 'slow-node', ownerToken: 'slow' });
    const fence = { stage: 'eval', key, ownerId: 'slow-node', ownerToken: 'slow', epoch: ghost.meta.epoch };
    await coordinator.markRunning(fence, LEASE);
    const beat = setInterval(() => void coordinator.heartbeat(fence, LEASE), 100);
    try {
      await expect(nodes[0]!.execute('eval', key, async () => 'x')).rejects.toBeInstanceOf(FlightWaitTimeoutError);
    } finally {
      clearInterval(beat);
    }
  });

  it('serialises heavy stages of one session with the session lock', async () => {
    const { nodes } = cluster(1, { stages: { extraction: { ...FAST, sessionLock: { enabled: true, ttlMs: 5000, waitMs: 5000 } } } });
    let active = 0;
    let maxActive = 0;
    const supplier = async () => {
      active++;
      maxActive = Math.max(maxActive, active);
      await sleep(40);
      active--;
      return 'ok';
    };
    await Promise.all(
      ['cv-1.pdf', 'cv-2.pdf', 'cv-3.pdf'].map((file) => nodes[0]!.execute('extraction', `s-1:${file}`, supplier, { sessionId: 's-1' })),
    );
    expect(maxActive).toBe(1);
    await Promise.all(['a', 'b'].map((session) => nodes[0]!.execute('extraction', `${session}:cv.pdf`, supplier, { sessionId: session })));
    expect(maxActive).toBe(2); // different sessions overlap
  });

  it('takes the session lock only in the owner run: identical requests follow, and a long run keeps the lock renewed', async () => {
    const lock = createMemorySessionLock();
    const { nodes } = cluster(2, {
      sessionLock: lock,
      stages: { extraction: { ...FAST, sessionLock: { enabled: true, ttlMs: 300, waitMs: 5000 } } },
    });
    let active = 0;
    let maxActive = 0;
    let runs = 0;
    const slow = async () => {
      runs++;
      active++;
      maxActive = Math.max(maxActive, active);
      await sleep(1000); // more than three lock TTLs
      active--;
      return 'questions';
    };
    const same = Array.from({ length: 6 }, (_, i) => nodes[i % 2]!.execute('extraction', 's-9:cv.pdf', slow, { sessionId: 's-9' }));
    await sleep(100);
    const other = nodes[1]!.execute('extraction', 's-9:cover.pdf', slow, { sessionId: 's-9' });
    const results = await Promise.all(same);
    expect(results.map((r) => r.role).sort()).toEqual(['follower', 'follower', 'follower', 'follower', 'follower', 'owner']);
    expect((await other).role).toBe('owner');
    expect(runs).toBe(2);
    expect(maxActive).toBe(1); // the lock outlived its TTL because it was renewed
  });

  it('classifies a guard timeout as a retryable TIMEOUT', async () => {
    const { nodes } = cluster(1, { stage: { guard: { timeoutMs: 50, retry: false, circuitBreaker: false } } });
    await expect(nodes[0]!.execute('eval', randomUUID(), () => sleep(500).then(() => 'late'))).rejects.toMatchObject({
      errorType: 'TIMEOUT',
      retryable: true,
    });
  });

  it('rejects bad input with typed validation errors', async () => {
    const { nodes } = cluster(1);
    const settled = record(nodes[0]!, 'settled');
    await expect(nodes[0]!.execute('bad stage', 'k', async () => 1)).rejects.toBeInstanceOf(FlightValidationError);
    await expect(nodes[0]!.execute('eval', '', async () => 1)).rejects.toBeInstanceOf(FlightValidationError);
    await expect(nodes[0]!.execute('eval', 'k', 'nope' as never)).rejects.toBeInstanceOf(FlightValidationError);
    await expect(nodes[0]!.execute('eval', randomUUID(), async () => 10n)).rejects.toMatchObject({ errorType: 'VALIDATION' });
    expect(settled.filter((s) => !s.ok)).toHaveLength(4);
    expect(() => createSingleFlight({ defaults: { heartbeatIntervalMs: 1000, takeoverAfterMs: 900 } }).policy('x')).toThrow(
      FlightValidationError,
    );
  });
});

describe('lost replies', () => {
  it('repeats a call whose reply was lost (outcome unknown) with the same arguments: same epoch, one run, result shared', async () => {
    const memory = createMemoryCoordinator();
    const lost: string[] = [];
    // Acquire and complete land in the store, but their first replies are lost (as past a deadline).
    const lossy = new Proxy(memory, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (prop !== 'acquire' && prop !== 'complete') return typeof value === 'function' ? value.bind(target) : value;
        return async (...args: unknown[]) => {
          const reply = await value.apply(target, args);
          if (!lost.includes(prop)) {
            lost.push(prop);
            throw new FlightCoordinationError(`no reply to ${prop}`, { outcomeUnknown: true });
          }
          return reply;
        };
      },
    }) as FlightCoordinator;
    const { nodes } = cluster(2, { coordinator: lossy });
    const key = randomUUID();
    let runs = 0;
    const first = await nodes[0]!.execute('eval', key, async () => ++runs);
    expect(first).toMatchObject({ value: 1, role: 'owner' });
    expect(lost).toEqual(['acquire', 'complete']);
    expect(await nodes[1]!.execute('eval', key, async () => ++runs)).toMatchObject({ value: 1, role: 'replay' });
    expect(runs).toBe(1);
    expect((await memory.readMeta({ stage: 'eval', key }))?.takeovers).toBe(0); // the repeat took the same epoch
  });

  it('does not repeat a call that surely failed (outcome known)', async () => {
    let acquires = 0;
    const memory = createMemoryCoordinator();
    const refusing = new Proxy(memory, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (prop !== 'acquire') return typeof value === 'function' ? value.bind(target) : value;
        return async () => {
          acquires++;
          throw new FlightCoordinationError('connect ECONNREFUSED');
        };
      },
    }) as FlightCoordinator;
    const { nodes } = cluster(1, { coordinator: refusing });
    await expect(nodes[0]!.execute('eval', randomUUID(), async () => 1)).rejects.toBeInstanceOf(FlightCoordinationError);
    expect(acquires).toBe(1);
  });
});

describe('modes', () => {
  it('hybrid mode falls back to the in-process single-flight while coordination fails, then returns', async () => {
    const state = { down: true };
    const coordinator = downCoordinator(createMemoryCoordinator(), state);
    const sf = createSingleFlight({ coordinator, mode: 'hybrid', defaults: FAST, fallbackCooldownMs: 200 });
    instances.push(sf);
    const fallbacks = record(sf, 'fallback');
    let runs = 0;
    const supplier = async () => {
      runs++;
      await sleep(30);
      return 'served';
    };
    const key = randomUUID();
    const results = await Promise.all(Array.from({ length: 20 }, () => sf.execute('eval', key, supplier)));
    expect(runs).toBe(1);
    expect(results.every((r) => r.role === 'local' && r.value === 'served')).toBe(true);
    expect(fallbacks.length).toBeGreaterThanOrEqual(1);
    expect(sf.degraded).toBe(true);
    state.down = false;
    await sleep(250);
    expect(sf.degraded).toBe(false);
    const back = await sf.execute('eval', randomUUID(), supplier);
    expect(back.role).toBe('owner');
  });

  it('distributed mode fails fast with a typed coordination error', async () => {
    const coordinator = downCoordinator(createMemoryCoordinator(), { down: true });
    const sf = createSingleFlight({ coordinator, mode: 'distributed', defaults: FAST });
    instances.push(sf);
    let runs = 0;
    await expect(sf.execute('eval', 'k', async () => ++runs)).rejects.toBeInstanceOf(FlightCoordinationError);
    expect(runs).toBe(0);
  });

  it('local mode deduplicates in process only', async () => {
    const sf = createSingleFlight({ mode: 'local', defaults: FAST });
    instances.push(sf);
    let runs = 0;
    const key = randomUUID();
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        sf.execute('eval', key, async () => {
          runs++;
          await sleep(20);
          return 'x';
        }),
      ),
    );
    expect(runs).toBe(1);
    expect(results.every((r) => r.role === 'local' && r.shared)).toBe(true);
  });
});
