/**
 * Behaviour every Redis adapter must show beyond the state machine (which the core conformance suite
 * covers): multi-process single-flight, takeover of killed and paused owners, deadlines and typed
 * errors, hybrid fallback, the session lock, O(1) connections, push wake-up, NOSCRIPT reload, WAIT.
 * Each adapter package registers it in one call, so both clients run the same tests.
 */
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import {
  createEnvelopeCodec,
  createSingleFlight,
  FlightCoordinationError,
  FlightLockLostError,
  FlightLockTimeoutError,
  FlightResultTooLargeError,
  FlightValidationError,
} from '@flight/core';
import { type FlightCoordinator } from '@flight/core/adapter';
import { createManualClock } from '@flight/core/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  type RedisDriver,
  type RedisCoordinatorOptions,
  createRedisCoordinator,
  type RedisCoordinator,
  assertRedisVersion,
  type RedisSessionLock,
  type RedisSessionLockOptions,
  runScript,
  FlightRedisVersionError,
  toFlightRedisError,
  LUA_SCRIPTS,
  flightKeys,
  noticeChannel,
  RECORD_HEADER,
  SAMPLE_MAX_AGE_MS,
} from '@flight/redis-scripts';
import {
  countClients,
  deleteKeys,
  scanKeysWithoutTtl,
  sharedRedisUrl,
  sleep,
  startRedisServer,
  type RedisServer,
  serverTimeMs,
  WAIT_FOR_EFFECT,
} from '@flight/test-servers';
import { startWorker, type Worker } from './multiprocess';
import { countedDriver } from './counted-driver';

export interface RedisAdapterUnderTest {
  name: string;
  kind: 'ioredis' | 'node-redis';
  /** Absolute path of the adapter's src/index.ts (loaded by child processes). */
  module: string;
  /** A coordinator that creates (and closes) its own client to `url`. */
  coordinator(url: string, options: RedisCoordinatorOptions): RedisCoordinator;
  sessionLock(url: string, options: RedisSessionLockOptions): RedisSessionLock;
  driver(url: string): RedisDriver;
}

const LEASE = { takeoverAfterMs: 3000, leaseTtlMs: 6000, maxRunMs: 20_000 };

async function runScriptOn(driver: RedisDriver): Promise<unknown> {
  try {
    return await runScript(driver, 'probe', [], []);
  } finally {
    await driver.close();
  }
}

async function ownFence(c: FlightCoordinator, stage: string, key: string) {
  const reply = await c.acquire({ stage, key, ...LEASE, ownerId: 'node-a', ownerToken: randomUUID() });
  const fence = { stage, key, ownerId: 'node-a', ownerToken: reply.meta.ownerToken, epoch: reply.meta.epoch };
  await c.markRunning(fence, LEASE);
  return fence;
}

export function registerRedisAdapterSuite(adapter: RedisAdapterUnderTest): void {
  const url = sharedRedisUrl();
  const prefix = `flight-suite-${adapter.kind}-${randomUUID().slice(0, 8)}`;

  describe(`${adapter.name}: Redis adapter behaviour`, () => {
    afterAll(async () => {
      expect(await scanKeysWithoutTtl(url, `${prefix}*`)).toEqual([]);
      await deleteKeys(url, `${prefix}*`);
    });

    describe('multi-process (3 Node processes × 100 callers, distributed mode)', () => {
      let workers: Worker[] = [];
      const mpPrefix = `${prefix}-mp`;
      beforeAll(async () => {
        workers = await Promise.all(
          [0, 1, 2].map((i) => startWorker({ adapter: adapter.kind, module: adapter.module, url, prefix: mpPrefix, nodeId: `proc-${i}` })),
        );
      });
      afterAll(async () => {
        await Promise.all(workers.map((w) => w.stop()));
      });
      const runsOf = (results: { runs: number }[]) => results.reduce((sum, r) => sum + r.runs, 0);

      it('links the follower span in another process to the owner span (traceparent kept in the Redis record)', async () => {
        const traced = await Promise.all(
          ['owner', 'follower'].map((role) =>
            startWorker({
              adapter: adapter.kind,
              module: adapter.module,
              url,
              prefix: `${mpPrefix}-trace`,
              nodeId: `trace-${role}`,
              tracing: true,
            }),
          ),
        );
        try {
          const [owner, follower] = traced as [Worker, Worker];
          const key = `traced-${randomUUID()}`;
          const started = owner.nextRunning();
          const ran = owner.burst({ stage: 'trace', key, callers: 1, behavior: 'value', delayMs: 400, value: 'v' });
          const epoch = await started;
          const followed = await follower.burst({ stage: 'trace', key, callers: 2, behavior: 'value', delayMs: 0, value: 'never' });
          expect((await ran).outcomes).toMatchObject([{ ok: true, role: 'owner', value: 'v@trace-owner' }]);
          expect(followed.outcomes.every((o) => o.ok && o.role === 'follower' && o.value === 'v@trace-owner')).toBe(true);
          const [ownerSpans, followerSpans] = await Promise.all([owner.spans(), follower.spans()]);
          const ownerSpan = ownerSpans.find((s) => s.role === 'owner');
          expect(ownerSpan).toMatchObject({ epoch, links: [] });
          const followerRoles = followerSpans.map((s) => s.role).sort();
          expect(followerRoles).toEqual(['follower', 'follower']);
          for (const span of followerSpans) {
            expect(span.links).toEqual([ownerSpan!.spanId]);
            expect(span.traceId).not.toBe(ownerSpan!.traceId);
          }
        } finally {
          await Promise.all(traced.map((w) => w.stop()));
        }
      });

      it('runs the supplier exactly once and gives all 300 callers the same value', async () => {
        const before = 0;
        const results = await Promise.all(
          workers.map((w) => w.burst({ stage: 'mp', key: 'same', callers: 100, behavior: 'value', delayMs: 300, value: 'v1' })),
        );
        expect(runsOf(results) - before).toBe(1);
        const outcomes = results.flatMap((r) => r.outcomes);
        expect(outcomes).toHaveLength(300);
        expect(outcomes.every((o) => o.ok)).toBe(true);
        expect(new Set(outcomes.map((o) => o.value)).size).toBe(1);
        // One caller in one process ran the supplier; its 99 neighbours and the other two processes followed.
        expect(outcomes.filter((o) => o.role === 'owner')).toHaveLength(1);
        expect(outcomes.filter((o) => o.role === 'follower')).toHaveLength(299);
      });

      it('gives all 300 callers a non-retryable failure of one run', async () => {
        const start = runsOf(
          await Promise.all(
            workers.map((w) => w.burst({ stage: 'mp', key: 'noop', callers: 0, behavior: 'value', delayMs: 0, value: '' })),
          ),
        );
        const results = await Promise.all(
          workers.map((w) => w.burst({ stage: 'mp', key: 'hard', callers: 100, behavior: 'fail-hard', delayMs: 300, value: '' })),
        );
        expect(runsOf(results) - start).toBe(1);
        const outcomes = results.flatMap((r) => r.outcomes);
        expect(outcomes).toHaveLength(300);
        expect(
          outcomes.every((o) => !o.ok && o.code === 'E_FLIGHT_EXECUTION' && o.errorType === 'VALIDATION' && o.retryable === false),
        ).toBe(true);
      });

      it('lets the next call take over after a retryable failure', async () => {
        const failed = await Promise.all(
          workers.map((w) => w.burst({ stage: 'mp', key: 'soft', callers: 100, behavior: 'fail-soft', delayMs: 300, value: '' })),
        );
        const outcomes = failed.flatMap((r) => r.outcomes);
        expect(outcomes).toHaveLength(300);
        // The owner's callers get the retryable failure; nobody gets a value.
        expect(outcomes.some((o) => !o.ok && o.errorType === 'PROVIDER' && o.retryable === true)).toBe(true);
        expect(outcomes.every((o) => !o.ok)).toBe(true);
        const next = await workers[1]!.burst({ stage: 'mp', key: 'soft', callers: 1, behavior: 'value', delayMs: 10, value: 'v2' });
        expect(next.outcomes[0]).toMatchObject({ ok: true, role: 'owner', value: 'v2@proc-1' });
      });
    });

    describe('owner processes that die or stall', () => {
      const fPrefix = `${prefix}-fault`;
      it('replaces an owner killed with SIGKILL mid-run after takeover detection', async () => {
        const [a, b] = await Promise.all(
          ['killed', 'heir'].map((nodeId) => startWorker({ adapter: adapter.kind, module: adapter.module, url, prefix: fPrefix, nodeId })),
        );
        try {
          const running = a!.nextRunning();
          void a!.burst({ stage: 'fault', key: 'kill', callers: 1, behavior: 'hang', delayMs: 0, value: '' });
          const oldEpoch = await running;
          a!.child.kill('SIGKILL');
          const result = await b!.burst({ stage: 'fault', key: 'kill', callers: 1, behavior: 'value', delayMs: 10, value: 'new' });
          expect(result.outcomes[0]).toMatchObject({ ok: true, role: 'owner', value: 'new@heir' });
          expect(result.outcomes[0]!.epoch).toBeGreaterThan(oldEpoch);
        } finally {
          await Promise.all([a!.stop(), b!.stop()]);
        }
      });

      it('fences a paused owner (SIGSTOP/SIGCONT): it cannot overwrite the new result', async () => {
        const [a, b] = await Promise.all(
          ['paused', 'heir'].map((nodeId) => startWorker({ adapter: adapter.kind, module: adapter.module, url, prefix: fPrefix, nodeId })),
        );
        const reader = adapter.coordinator(url, { prefix: fPrefix });
        try {
          const running = a!.nextRunning();
          const old = a!.burst({ stage: 'fault', key: 'pause', callers: 1, behavior: 'value', delayMs: 1500, value: 'old' });
          const oldEpoch = await running;
          process.kill(a!.pid, 'SIGSTOP');
          const fresh = await b!.burst({ stage: 'fault', key: 'pause', callers: 1, behavior: 'value', delayMs: 10, value: 'new' });
          expect(fresh.outcomes[0]).toMatchObject({ ok: true, role: 'owner', value: 'new@heir' });
          expect(fresh.outcomes[0]!.epoch).toBeGreaterThan(oldEpoch);
          process.kill(a!.pid, 'SIGCONT');
          const late = await old;
          // The woken owner's write is refused; its caller ends with the new result or a typed error, never 'old'.
          const outcome = late.outcomes[0]!;
          if (outcome.ok) expect(outcome.value).toBe('new@heir');
          else expect(outcome.code).toMatch(/^E_FLIGHT_/);
          const stored = await reader.readMeta({ stage: 'fault', key: 'pause' });
          expect(stored).toMatchObject({ status: 'SUCCEEDED', epoch: fresh.outcomes[0]!.epoch, ownerId: 'heir' });
        } finally {
          await reader.close();
          await Promise.all([a!.stop(), b!.stop()]);
        }
      });
    });

    describe('on a Redis of its own (stopped, paused, flushed)', () => {
      let server: RedisServer;
      beforeAll(async () => {
        server = await startRedisServer();
      });
      afterAll(async () => {
        await server?.stop();
      });

      it('fails fast in distributed mode and keeps serving in hybrid mode while Redis is down, then returns', async () => {
        const coordinator = adapter.coordinator(server.url, { prefix: 'h', commandTimeoutMs: 300 });
        const defaults = { l1: { enabled: false } };
        const distributed = createSingleFlight({ coordinator, mode: 'distributed', defaults });
        const hybrid = createSingleFlight({ coordinator, mode: 'hybrid', defaults, fallbackCooldownMs: 100 });
        try {
          expect((await hybrid.execute('h', 'k1', () => 'up')).role).toBe('owner');
          await server.stop();
          // A client left alone would queue the command until Redis returns: only the deadline ends it.
          const error = await distributed.execute('h', 'k2', () => 'x').catch((e: unknown) => e);
          expect(error).toBeInstanceOf(FlightCoordinationError);
          const local = await hybrid.execute('h', 'k3', () => 'local value');
          expect(local).toMatchObject({ value: 'local value', role: 'local' });
          await server.restart();
          let role = '';
          for (let i = 0; i < 50 && role !== 'owner'; i++) {
            await sleep(100);
            role = (await hybrid.execute('h', `k4-${i}`, () => 'back')).role;
          }
          expect(role).toBe('owner');
        } finally {
          await distributed.close();
          await hybrid.close();
          await coordinator.close();
        }
      });

      it('hybrid: a value forgotten on another node is never served stale here in a later outage', async () => {
        const prefix = `hf-${randomUUID().slice(0, 8)}`;
        const cA = adapter.coordinator(server.url, { prefix, commandTimeoutMs: 300 });
        const cB = adapter.coordinator(server.url, { prefix, commandTimeoutMs: 300 });
        const defaults = { l1: { enabled: false }, resultTtlMs: 200, stale: { whileRevalidateMs: 60_000, ifErrorMs: 60_000 } };
        const a = createSingleFlight({ coordinator: cA, mode: 'hybrid', defaults, fallbackCooldownMs: 100 });
        const b = createSingleFlight({ coordinator: cB, mode: 'hybrid', defaults, fallbackCooldownMs: 100 });
        try {
          expect(await a.execute('s', 'k', () => 'v1')).toMatchObject({ value: 'v1', role: 'owner' });
          expect(await b.forget('s', 'k')).toBe(true);
          await sleep(300); // past the fresh time: a kept copy would now be served stale
          await server.stop();
          expect(await a.execute('s', 'k', () => 'v2')).toMatchObject({ value: 'v2', role: 'local' });
        } finally {
          await server.restart();
          await Promise.all([a.close(), b.close()]);
          await Promise.all([cA.close(), cB.close()]);
        }
      });

      it('keeps connections constant with 1,000 waiting followers (one subscriber per coordinator)', async () => {
        const baseline = await countClients(server);
        // Connections are the point, not deadlines: 1,000 acquires at once may take seconds on a loaded machine.
        const coordinator = adapter.coordinator(server.url, { prefix: 'conn', commandTimeoutMs: 30_000 });
        const owner = adapter.coordinator(server.url, { prefix: 'conn', commandTimeoutMs: 30_000 });
        try {
          const fences = await Promise.all(Array.from({ length: 1000 }, (_, i) => ownFence(owner, 'conn', `k${i}`)));
          const waits = fences.map((f) => coordinator.waitForTerminal(f, { epoch: f.epoch, timeoutMs: 60_000 }));
          await vi.waitFor(() => expect(coordinator.waiting).toBe(1000), { timeout: 30_000, interval: 20 });
          // Two coordinators: each one command connection; only the waiting one opened a subscriber.
          expect(await countClients(server)).toBe(baseline + 3);
          await Promise.all(fences.map((f) => owner.complete(f, { result: 'v', resultTtlMs: 5000 })));
          const events = await Promise.all(waits);
          expect(events.every((e) => e?.status === 'SUCCEEDED')).toBe(true);
          expect(coordinator.waiting).toBe(0);
        } finally {
          await coordinator.close();
          await owner.close();
        }
        await vi.waitFor(async () => expect(await countClients(server)).toBe(baseline), WAIT_FOR_EFFECT);
      });

      it('keeps its first subscriber connection when waits arrive while it connects: one connection, every waiter woken by its notice', async () => {
        const opened = async () => Number(/total_connections_received:(\d+)/.exec(String(await server.command('INFO', 'stats')))?.[1]);
        const owner = adapter.coordinator(server.url, { prefix: 'early' });
        const follower = adapter.coordinator(server.url, { prefix: 'early' });
        const notifications = () => (follower as { notifications?: { received: number; channels: number } }).notifications!;
        try {
          const fences = await Promise.all(Array.from({ length: 300 }, (_, i) => ownFence(owner, 'early', `k${i}`)));
          await follower.readMeta({ stage: 'early', key: 'warm' }); // its command connection is up
          const before = await opened();
          // One wait per turn of the event loop: subscribes are sent while the subscriber connects (an
          // ioredis duplicate sends SSUBSCRIBE before its ready check's INFO, which then fails).
          const waits: Promise<unknown>[] = [];
          for (const f of fences) {
            waits.push(follower.waitForTerminal(f, { epoch: f.epoch, timeoutMs: 10_000 }));
            await new Promise((resolve) => setImmediate(resolve));
          }
          // Every wait covered by its subscription before the owner completes.
          await vi.waitFor(() => expect(notifications().channels).toBe(300), WAIT_FOR_EFFECT);
          const received = notifications().received;
          await Promise.all(fences.map((f) => owner.complete(f, { result: 'v', resultTtlMs: 5000 })));
          const events = (await Promise.all(waits)) as ({ status: string } | null)[];
          expect(events.every((e) => e?.status === 'SUCCEEDED')).toBe(true);
          // Only the subscriber was opened (+ the one-shot connection of this INFO), and no wait was
          // answered by polling for lack of a subscription.
          expect((await opened()) - before).toBe(2);
          expect(notifications().received - received).toBe(300);
        } finally {
          await follower.close();
          await owner.close();
        }
      });

      it('wakes a follower on another connection within milliseconds, on the server clock', async () => {
        const follower = adapter.coordinator(server.url, { prefix: 'wake' });
        const owner = adapter.coordinator(server.url, { prefix: 'wake' });
        try {
          const fence = await ownFence(owner, 'wake', 'k');
          const meta = await follower.readMeta(fence);
          expect(Math.abs(meta!.createdAt - Date.now())).toBeLessThan(1000);
          // A wait longer than the test may take: only the completion's notice can end it.
          const waiting = follower.waitForTerminal(fence, { epoch: fence.epoch, timeoutMs: 3_600_000 });
          await sleep(50);
          await owner.complete(fence, { result: 'v', resultTtlMs: 5000 });
          expect(await waiting).toMatchObject({ status: 'SUCCEEDED', epoch: fence.epoch });
        } finally {
          await follower.close();
          await owner.close();
        }
      });

      it('follows with one re-read per flight (behind its SSUBSCRIBE where the subscriber runs scripts, else once confirmed), one round trip when already subscribed, the result in the notice', async () => {
        const driver = adapter.driver(server.url);
        /** evalsha: on the command connection; behind: on the subscriber, sent before its SSUBSCRIBE was confirmed. */
        const counts = { evalsha: 0, behind: 0, subscribes: 0, subscribed: 0 };
        let confirming = 0;
        const counted: RedisDriver = {
          db: driver.db,
          evalsha: (sha, keys, args) => (counts.evalsha++, driver.evalsha(sha, keys, args)),
          eval: (source, keys, args) => driver.eval(source, keys, args),
          createSubscriber: (handlers) => {
            const sub = driver.createSubscriber(handlers);
            const scripts = sub.scripts;
            return {
              subscribe: (channels) => {
                counts.subscribes++;
                counts.subscribed += channels.length;
                confirming++;
                return sub.subscribe(channels).finally(() => confirming--);
              },
              unsubscribe: (channels) => sub.unsubscribe(channels),
              ...(scripts
                ? {
                    scripts: {
                      evalsha: (sha, keys, args) => {
                        if (confirming > 0) counts.behind++;
                        return scripts.evalsha(sha, keys, args);
                      },
                      eval: (source, keys, args) => scripts.eval(source, keys, args),
                    },
                  }
                : {}),
              close: () => sub.close(),
            };
          },
          close: () => driver.close(),
        };
        const follower = createRedisCoordinator(counted, { prefix: 'onetrip' });
        const owner = adapter.coordinator(server.url, { prefix: 'onetrip' });
        // node-redis: a RESP3 subscriber runs the re-read right behind the SSUBSCRIBE (one round trip for both).
        const behindSubscribe = adapter.kind === 'node-redis';
        try {
          const join = (key: string, stage = 'ot') =>
            follower.acquire({ stage, key, ...LEASE, ownerId: 'node-b', ownerToken: randomUUID() });
          await follower.readMeta({ stage: 'ot', key: 'warm' }); // the server version check, once
          for (let i = 0; i < 3; i++) {
            // A stage of its own each time: its first follower (a stage that keeps joining subscribes first, below).
            const fence = await ownFence(owner, `ot${i}`, `k${i}`);
            counts.evalsha = 0;
            counts.behind = 0;
            const joined = await join(`k${i}`, `ot${i}`);
            expect(joined.outcome).toBe('FOLLOWER_WAIT');
            const waiting = follower.waitForTerminal(fence, { epoch: joined.meta.epoch, timeoutMs: 5000 });
            // The acquire, then one re-read: behind the SSUBSCRIBE, or once the flight's channel is confirmed.
            await vi.waitFor(() => expect(follower.notifications.channels).toBe(1), WAIT_FOR_EFFECT);
            await vi.waitFor(
              () => expect(counts).toMatchObject(behindSubscribe ? { evalsha: 1, behind: 1 } : { evalsha: 2, behind: 0 }),
              WAIT_FOR_EFFECT,
            );
            // A second follower of the same flight while the channel is live: its acquire alone.
            const second = await join(`k${i}`, `ot${i}`);
            const waiting2 = follower.waitForTerminal(fence, { epoch: second.meta.epoch, timeoutMs: 5000 });
            if (i % 2 === 0) await sleep(20);
            await owner.complete(fence, { result: `r ${i} ✓`, resultTtlMs: 5000 });
            for (const w of [waiting, waiting2])
              expect(await w).toMatchObject({ status: 'SUCCEEDED', epoch: fence.epoch, result: `r ${i} ✓` });
            expect(counts.evalsha + counts.behind).toBe(3);
          }
          // A stage whose acquires keep joining (ot2 after the loop): the channel is subscribed before the acquire
          // reads the flight, so the acquire is the only read.
          const herd = await ownFence(owner, 'ot2', 'herd');
          counts.evalsha = 0;
          counts.behind = 0;
          counts.subscribes = 0;
          const herdJoin = await join('herd', 'ot2');
          expect(herdJoin.outcome).toBe('FOLLOWER_WAIT');
          const herdWait = follower.waitForTerminal(herd, { epoch: herdJoin.meta.epoch, timeoutMs: 5000 });
          await vi.waitFor(() => expect(counts).toMatchObject({ evalsha: 1, behind: 0, subscribes: 1 }), WAIT_FOR_EFFECT);
          await owner.complete(herd, { result: 'herd ✓', resultTtlMs: 5000 });
          expect(await herdWait).toMatchObject({ status: 'SUCCEEDED', result: 'herd ✓' });
          expect(counts).toMatchObject({ evalsha: 1, behind: 0 });
          // The owner completes between the follower's acquire and its subscription: the re-read finds the result.
          const gap = await ownFence(owner, 'ot', 'gap');
          const gapJoin = await join('gap');
          await owner.complete(gap, { result: 'in the gap', resultTtlMs: 5000 });
          expect(await follower.waitForTerminal(gap, { epoch: gapJoin.meta.epoch, timeoutMs: 3_600_000 })).toMatchObject({
            status: 'SUCCEEDED',
            result: 'in the gap',
          });
          // Waits started in one tick are subscribed in one batch; channels are dropped once nobody waits.
          const fences = await Promise.all(Array.from({ length: 10 }, (_, i) => ownFence(owner, 'ot', `batch${i}`)));
          counts.subscribes = 0;
          counts.subscribed = 0;
          const waits = fences.map((f) => follower.waitForTerminal(f, { epoch: f.epoch, timeoutMs: 5000 }));
          await vi.waitFor(() => expect(follower.notifications.channels).toBe(10), WAIT_FOR_EFFECT);
          expect(counts).toMatchObject({ subscribes: 1, subscribed: 10 });
          await Promise.all(fences.map((f) => owner.complete(f, { result: 'b', resultTtlMs: 5000 })));
          expect((await Promise.all(waits)).every((e) => e?.result === 'b')).toBe(true);
          await vi.waitFor(() => expect(follower.notifications.channels).toBe(0), WAIT_FOR_EFFECT);
          expect(follower.notifications.foreign).toBe(0);
          expect(follower.notifications.received).toBe(14);
          // A notice lost while the subscriber reconnects between acquire and wait: the waiter re-reads.
          const fence = await ownFence(owner, 'ot', 'lost');
          const joined = await follower.acquire({ stage: 'ot', key: 'lost', ...LEASE, ownerId: 'node-b', ownerToken: randomUUID() });
          await server.command('CLIENT', 'KILL', 'TYPE', 'pubsub');
          await owner.complete(fence, { result: 'late', resultTtlMs: 5000 });
          await sleep(300);
          expect(await follower.waitForTerminal(fence, { epoch: joined.meta.epoch, timeoutMs: 3_600_000 })).toMatchObject({
            status: 'SUCCEEDED',
            result: 'late',
          });
        } finally {
          await follower.close();
          await owner.close();
        }
      });

      it('publishes a terminal notice only when somebody can be waiting, and strands no waiter (joined, watching, or of a run taken over)', async () => {
        const owner = adapter.coordinator(server.url, { prefix: 'quiet' });
        const waiter = adapter.coordinator(server.url, { prefix: 'quiet' });
        const driver = adapter.driver(server.url);
        const heard: string[] = [];
        const listener = driver.createSubscriber({ onMessage: (channel) => heard.push(channel), onReconnect: () => undefined });
        const channelOf = (key: string) => noticeChannel('quiet', flightKeys('quiet', { stage: 'q', key }).tag, driver.db);
        const join = (key: string, epoch?: number) =>
          waiter.acquire({
            stage: 'q',
            key,
            ...LEASE,
            ownerId: 'node-b',
            ownerToken: randomUUID(),
            ...(epoch === undefined ? {} : { joinEpoch: epoch }),
          });
        try {
          await listener.subscribe(['alone', 'joined', 'watched', 'taken'].map(channelOf));
          // An owner alone: nobody can be waiting, no notice.
          const alone = await ownFence(owner, 'q', 'alone');
          expect((await owner.complete(alone, { result: 'a', resultTtlMs: 5000 })).ok).toBe(true);
          // A follower that joins between the owner's acquire and its complete is counted, so it is notified.
          const joinedRun = await ownFence(owner, 'q', 'joined');
          const joined = await join('joined');
          expect(joined).toMatchObject({ outcome: 'FOLLOWER_WAIT', meta: { followers: 1 } });
          const joinedWait = waiter.waitForTerminal(joinedRun, { epoch: joined.meta.epoch, timeoutMs: 20_000 });
          expect((await owner.complete(joinedRun, { result: 'j', resultTtlMs: 5000 })).ok).toBe(true);
          expect(await joinedWait).toMatchObject({ status: 'SUCCEEDED', epoch: joinedRun.epoch, result: 'j' });
          // A waiter that never joined by acquire marks the record watched once its channel is live.
          const watchedRun = await ownFence(owner, 'q', 'watched');
          const watchedWait = waiter.waitForTerminal(watchedRun, { epoch: watchedRun.epoch, timeoutMs: 20_000 });
          await sleep(100); // subscribed and re-read: from here on only the notice can wake it
          expect(await owner.readMeta(watchedRun)).toMatchObject({ status: 'RUNNING', followers: 0 });
          expect((await owner.complete(watchedRun, { result: 'w', resultTtlMs: 5000 })).ok).toBe(true);
          expect(await watchedWait).toMatchObject({ status: 'SUCCEEDED', epoch: watchedRun.epoch, result: 'w' });
          // The follower of a run whose owner went silent: the next owner's run has no follower of its own,
          // yet its notice is published for the waiter still listening on the old run.
          const quickLease = { takeoverAfterMs: 50, leaseTtlMs: 5000, maxRunMs: 20_000 };
          const first = await owner.acquire({ stage: 'q', key: 'taken', ...quickLease, ownerId: 'node-a', ownerToken: randomUUID() });
          const old = await waiter.acquire({ stage: 'q', key: 'taken', ...LEASE, ownerId: 'node-b', ownerToken: randomUUID() });
          expect(old.outcome).toBe('FOLLOWER_WAIT');
          const oldWait = waiter.waitForTerminal({ stage: 'q', key: 'taken' }, { epoch: first.meta.epoch, timeoutMs: 20_000 });
          await sleep(100);
          const token = randomUUID();
          const next = await owner.acquire({ stage: 'q', key: 'taken', ...quickLease, ownerId: 'node-c', ownerToken: token });
          expect(next).toMatchObject({ outcome: 'OWNER_TAKEOVER', meta: { followers: 0 } });
          const nextFence = { stage: 'q', key: 'taken', ownerId: 'node-c', ownerToken: token, epoch: next.meta.epoch };
          expect((await owner.complete(nextFence, { result: 't', resultTtlMs: 5000 })).ok).toBe(true);
          expect(await oldWait).toMatchObject({ status: 'SUCCEEDED', epoch: next.meta.epoch });
          // Notices arrive in publish order on one connection: 'alone' would have come first.
          await vi.waitFor(() => expect(heard).toHaveLength(3), WAIT_FOR_EFFECT);
          expect(heard).toEqual(['joined', 'watched', 'taken'].map(channelOf));
        } finally {
          await listener.close();
          await driver.close();
          await waiter.close();
          await owner.close();
        }
      });

      it('knows the run it joined in a later wait without the acquire reply: it re-reads without marking the record watched and takes the result the notice carries', async () => {
        const owner = adapter.coordinator(server.url, { prefix: 'again' });
        const waiter = adapter.coordinator(server.url, { prefix: 'again' });
        try {
          const run = await ownFence(owner, 'q', 'k');
          const ref = { stage: 'q', key: 'k' };
          const joined = await waiter.acquire({ ...ref, ...LEASE, ownerId: 'node-b', ownerToken: randomUUID() });
          expect(joined.outcome).toBe('FOLLOWER_WAIT');
          // The wait right after the acquire times out; the next one is given neither the reply nor its handle.
          expect(await waiter.waitForTerminal(ref, { epoch: joined.meta.epoch, timeoutMs: 100 })).toBeNull();
          const later = waiter.waitForTerminal(ref, { epoch: joined.meta.epoch, timeoutMs: 20_000 });
          await sleep(100); // subscribed and re-read
          const stored = String(await server.command('GET', flightKeys('again', ref).meta));
          const [watchedAt] = RECORD_HEADER.watched;
          expect(stored[watchedAt]).toBe('0'); // a `watch` re-read would have set it
          expect((await owner.complete(run, { result: 'r', resultTtlMs: 5000 })).ok).toBe(true);
          expect(await later).toMatchObject({ status: 'SUCCEEDED', epoch: run.epoch, result: 'r' });
        } finally {
          await waiter.close();
          await owner.close();
        }
      });

      it('still wakes waiters when the subscriber connection is killed (re-check after reconnect)', async () => {
        const follower = adapter.coordinator(server.url, { prefix: 'watchdog' });
        const owner = adapter.coordinator(server.url, { prefix: 'watchdog' });
        try {
          const fence = await ownFence(owner, 'wd', 'k');
          const waiting = follower.waitForTerminal(fence, { epoch: fence.epoch, timeoutMs: 4000 });
          await sleep(50);
          await server.command('CLIENT', 'KILL', 'TYPE', 'pubsub');
          await owner.complete(fence, { result: 'v', resultTtlMs: 5000 });
          expect(await waiting).toMatchObject({ status: 'SUCCEEDED' });
        } finally {
          await follower.close();
          await owner.close();
        }
      });

      it('creates a new flight with one plain SET NX GET once it has seen the server clock; the script decides whatever needs a write or the server clock', async () => {
        const driver = adapter.driver(server.url);
        expect(driver.setIfAbsent).toBeTypeOf('function');
        const sent: string[] = [];
        const c = createRedisCoordinator(countedDriver(driver, sent, false), { prefix: 'fast' });
        const other = adapter.coordinator(server.url, { prefix: 'fast' });
        const input = (stage: string, key: string, ownerId = 'node-a') => ({
          stage,
          key,
          ...LEASE,
          ownerId,
          ownerToken: randomUUID(),
          startRunning: true,
        });
        const acquired = async (stage: string, key: string) => {
          sent.length = 0;
          const reply = await c.acquire(input(stage, key));
          return { outcome: reply.outcome, sent: [...sent], reply };
        };
        try {
          // No server time seen yet: the script creates the flight (and its reply tells the time).
          expect(await acquired('fa', 'k0')).toMatchObject({ outcome: 'OWNER_NEW', sent: ['probe', 'acquire'] });
          // Then one SET per new flight, no script; the record is what the scripts read, on the server clock.
          const fresh = await acquired('fa', 'k1');
          expect(fresh).toMatchObject({ outcome: 'OWNER_NEW', sent: ['SET NX GET'] });
          expect(await other.readMeta({ stage: 'fa', key: 'k1' })).toEqual(fresh.reply.meta);
          expect(Math.abs(fresh.reply.meta.updatedAt - (await serverTimeMs(server.port)))).toBeLessThan(1000);
          const fence = {
            stage: 'fa',
            key: 'k1',
            ownerId: 'node-a',
            ownerToken: fresh.reply.meta.ownerToken,
            epoch: fresh.reply.meta.epoch,
          };
          expect(await other.heartbeat(fence, LEASE)).toMatchObject({ ok: true });
          expect(await c.complete(fence, { result: 'one ✓', resultTtlMs: 60_000 })).toMatchObject({ ok: true });
          // A stored result is replayed from the SET's GET: one command, no script.
          expect(await acquired('fa', 'k1')).toMatchObject({ outcome: 'REPLAY_SUCCESS', sent: ['SET NX GET'], reply: { result: 'one ✓' } });
          // A result about to expire: the server clock decides (here: still there).
          const short = await acquired('fa', 'short');
          const shortFence = {
            stage: 'fa',
            key: 'short',
            ownerId: 'node-a',
            ownerToken: short.reply.meta.ownerToken,
            epoch: short.reply.meta.epoch,
          };
          await c.complete(shortFence, { result: 'brief', resultTtlMs: 800 });
          expect(await acquired('fa', 'short')).toMatchObject({ outcome: 'REPLAY_SUCCESS', sent: ['SET NX GET', 'acquire'] });
          // Something that is no record of this version under the flight's key: the script's rules apply.
          await server.command('SET', flightKeys('fast', { stage: 'fa', key: 'junk' }).meta, 'not a record', 'PX', 60_000);
          expect(await acquired('fa', 'junk')).toMatchObject({ outcome: 'OWNER_NEW', sent: ['SET NX GET', 'acquire'] });
          // A running flight: the script counts the follower (the SET wrote nothing).
          for (let i = 0; i < 2; i++) await ownFence(other, 'herd', `run${i}`);
          const joined = await acquired('herd', 'run0');
          expect(joined).toMatchObject({ outcome: 'FOLLOWER_WAIT', sent: ['SET NX GET', 'acquire'], reply: { meta: { followers: 1 } } });
          expect(await acquired('herd', 'run1')).toMatchObject({ outcome: 'FOLLOWER_WAIT', sent: ['SET NX GET', 'acquire'] });
          // A stage whose acquires keep joining goes to the script first: a follower in one round trip ...
          await ownFence(other, 'herd', 'run2');
          expect(await acquired('herd', 'run2')).toMatchObject({ outcome: 'FOLLOWER_WAIT', sent: ['acquire'] });
          // ... until new flights there take it back to the SET; other stages never left it.
          expect(await acquired('fa', 'k2')).toMatchObject({ outcome: 'OWNER_NEW', sent: ['SET NX GET'] });
          for (const key of ['n0', 'n1', 'n2']) expect((await acquired('herd', key)).outcome).toBe('OWNER_NEW');
          expect(await acquired('herd', 'n3')).toMatchObject({ outcome: 'OWNER_NEW', sent: ['SET NX GET'] });
          // Every key written this way has a TTL.
          expect(await scanKeysWithoutTtl(server.url, 'fast:*')).toEqual([]);
        } finally {
          await c.close();
          await other.close();
        }
      });

      it("sets a new flight's key to expire when its lease does (PXAT), even when the SET runs late", async () => {
        const c = adapter.coordinator(server.url, { prefix: 'pxat' });
        const input = (key: string) => ({ stage: 'px', key, ...LEASE, ownerId: 'node-a', ownerToken: randomUUID(), startRunning: true });
        try {
          // The script creates the first flight, and its reply shows the server clock.
          await c.acquire(input('a'));
          // The next flight's SET waits 600 ms behind a pause of writes before it runs.
          await server.command('CLIENT', 'PAUSE', 600, 'WRITE');
          const late = await c.acquire(input('b'));
          expect(late.outcome).toBe('OWNER_NEW');
          const pttl = Number(await server.command('PTTL', flightKeys('pxat', { stage: 'px', key: 'b' }).meta));
          const left = late.meta.expireAt - (await serverTimeMs(server.port));
          // The key lives as long as the record's lease, not 600 ms longer.
          expect(Math.abs(pttl - left)).toBeLessThan(150);
        } finally {
          await c.close();
        }
      });

      it('keeps no L1 copy while its subscriber connection is down (CLIENT KILL TYPE pubsub), and keeps them again once re-subscribed', async () => {
        const coordinator = adapter.coordinator(server.url, { prefix: 'l1-down' });
        const sf = createSingleFlight({
          coordinator,
          mode: 'distributed',
          telemetry: false,
          defaults: { l1: { enabled: true, ttlMs: 60_000 }, guard: { retry: false, circuitBreaker: false, timeoutMs: 0 } },
        });
        const read = async () => (await sf.execute('l1d', 'k', () => 'v')).role;
        try {
          // Read until L1 serves it: the first reads note the flight, listen to it, and fill once covered.
          await vi.waitFor(async () => expect(await read()).toBe('l1'), WAIT_FOR_EFFECT);
          await server.command('CLIENT', 'KILL', 'TYPE', 'pubsub');
          // The copy is gone once the client sees the connection break; it comes back only once the channel is confirmed again.
          await vi.waitFor(async () => expect(await read()).toBe('replay'), WAIT_FOR_EFFECT);
          await vi.waitFor(async () => expect(await read()).toBe('l1'), WAIT_FOR_EFFECT);
        } finally {
          await sf.close();
          await coordinator.close();
        }
      });

      it('keeps no L1 copy once its subscriber connection goes silent without breaking (a blackholed network): noticed by its unanswered PINGs', async () => {
        // A TCP proxy to the test's Redis that can start swallowing every byte, both ways, without closing anything.
        let swallow = false;
        const sockets = new Set<net.Socket>();
        const proxy = net.createServer((client) => {
          const upstream = net.connect(server.port, '127.0.0.1');
          sockets.add(client).add(upstream);
          client.on('data', (data) => void (swallow || upstream.write(data)));
          upstream.on('data', (data) => void (swallow || client.write(data)));
          const end = () => (client.destroy(), upstream.destroy());
          client.on('error', end).on('close', end);
          upstream.on('error', end).on('close', end);
        });
        await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
        const url = `redis://127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
        const coordinator = adapter.coordinator(url, { prefix: 'l1-silent', commandTimeoutMs: 400 });
        const sf = createSingleFlight({
          coordinator,
          mode: 'distributed',
          telemetry: false,
          defaults: { l1: { enabled: true, ttlMs: 60_000 }, guard: { retry: false, circuitBreaker: false, timeoutMs: 0 } },
        });
        const read = () =>
          sf
            .execute('l1s', 'k', () => 'v')
            .then(
              (r) => r.role,
              (error: Error) => error.name,
            );
        try {
          await vi.waitFor(async () => expect(await read()).toBe('l1'), WAIT_FOR_EFFECT);
          swallow = true;
          // Once its PINGs go unanswered its forgets could be missed: no copy is served, the read goes to Redis (and times out).
          await vi.waitFor(async () => expect(await read()).toBe('FlightCoordinationError'), WAIT_FOR_EFFECT);
        } finally {
          for (const socket of sockets) socket.destroy();
          proxy.close();
          await sf.close();
          await coordinator.close();
        }
      });

      it('a fast-acquired run whose SET ran late (a pause of writes past takeoverAfterMs) is confirmed before it runs: one owner, never two', async () => {
        const [a, b] = [adapter.coordinator(server.url, { prefix: 'late-set' }), adapter.coordinator(server.url, { prefix: 'late-set' })];
        const lease = { takeoverAfterMs: 1500, leaseTtlMs: 3000, maxRunMs: 20_000 };
        const input = (key: string, ownerId: string) => ({
          stage: 'late',
          key,
          ...lease,
          ownerId,
          ownerToken: randomUUID(),
          startRunning: true,
        });
        try {
          // A's estimate of the server clock is warm, so its next new flight is a plain SET NX GET.
          await a.acquire(input('warm', 'node-a'));
          await server.command('CLIENT', 'PAUSE', 1700, 'WRITE');
          const setSentAt = performance.now();
          let firstReadAt = 0;
          const first = a.acquire(input('k', 'node-a')).then((reply) => ((firstReadAt = performance.now()), reply));
          // The pause is over: A's SET ran 1.7 s after it was sent, stamped with the time it was sent.
          await sleep(1850);
          const second = await b.acquire(input('k', 'node-b'));
          const replies = [await first, second];
          const owners = replies.filter((reply) => reply.outcome === 'OWNER_NEW' || reply.outcome === 'OWNER_TAKEOVER');
          expect(replies.map((reply) => reply.outcome)).toEqual(['OWNER_NEW', 'FOLLOWER_WAIT']);
          expect(owners).toHaveLength(1);
          // Confirmed by the server clock: its lease is fresh, its epoch above the warm flight's.
          expect((await serverTimeMs(server.port)) - replies[0]!.meta.heartbeatAt).toBeLessThan(1000);
          expect(second.meta.epoch).toBe(replies[0]!.meta.epoch);
          // Its lease dates from the confirmation, sent once the SET's reply came back (after the pause), and
          // the reply says so: core does not renew it once more.
          expect(replies[0]!.leaseSentAgoMs).toBeLessThanOrEqual(firstReadAt - setSentAt - 1500);
        } finally {
          await a.close();
          await b.close();
        }
      });

      it('epochs only grow: a new run of a key gets an epoch above the last run of it, even from a process whose clock estimate lags', async () => {
        // A's replies to scripts are read 300 ms after Redis sent them, so its estimate of the server clock trails by 300 ms.
        const base = adapter.driver(server.url);
        const lagging: RedisDriver = Object.assign(Object.create(base) as RedisDriver, {
          evalsha: (...args: Parameters<RedisDriver['evalsha']>) => base.evalsha(...args).then(async (reply) => (await sleep(300), reply)),
          eval: (...args: Parameters<RedisDriver['eval']>) => base.eval(...args).then(async (reply) => (await sleep(300), reply)),
        });
        const a = createRedisCoordinator(lagging, { prefix: 'epoch-lag' });
        const b = adapter.coordinator(server.url, { prefix: 'epoch-lag' });
        const input = (key: string, ownerId: string) => ({
          stage: 'ep',
          key,
          ...LEASE,
          ownerId,
          ownerToken: randomUUID(),
          startRunning: true,
        });
        try {
          await a.acquire(input('warm', 'node-a'));
          const epochs: number[] = [];
          for (let i = 0; i < 3; i++) {
            // B runs the key and keeps its result 50 ms; A starts the next run 120 ms later, once the key is gone.
            const run = await b.acquire(input('k', 'node-b'));
            const fence = { stage: 'ep', key: 'k', ownerId: 'node-b', ownerToken: run.meta.ownerToken, epoch: run.meta.epoch };
            expect(await b.complete(fence, { result: 'v', resultTtlMs: 50 })).toMatchObject({ ok: true });
            await sleep(120);
            const next = await a.acquire(input('k', 'node-a'));
            expect(next.outcome).toBe('OWNER_NEW');
            epochs.push(run.meta.epoch, next.meta.epoch);
            const nextFence = { stage: 'ep', key: 'k', ownerId: 'node-a', ownerToken: next.meta.ownerToken, epoch: next.meta.epoch };
            expect(await a.complete(nextFence, { result: 'w', resultTtlMs: 50 })).toMatchObject({ ok: true });
            await sleep(120);
          }
          for (let i = 1; i < epochs.length; i++) expect(epochs[i]!, `run ${i} after ${epochs[i - 1]}`).toBeGreaterThan(epochs[i - 1]!);
        } finally {
          await a.close();
          await b.close();
        }
      });

      it("takes no server-clock sample from a repeated complete (its record holds the first write's time): new flights keep the server's now", async () => {
        const c = adapter.coordinator(server.url, { prefix: 'clock-repeat' });
        const input = (key: string) => ({ stage: 'clk', key, ...LEASE, ownerId: 'node-a', ownerToken: randomUUID(), startRunning: true });
        try {
          const first = await c.acquire(input('a'));
          const fence = { stage: 'clk', key: 'a', ownerId: 'node-a', ownerToken: first.meta.ownerToken, epoch: first.meta.epoch };
          expect(await c.complete(fence, { result: 'done', resultTtlMs: 60_000 })).toMatchObject({ ok: true });
          // Past half a sample's trusted age (SAMPLE_MAX_AGE_MS), a sample behind the best one replaces it.
          await sleep(SAMPLE_MAX_AGE_MS / 2 + 200);
          // The repeat (as after a lost reply) finds the result stored: OK, with the record of 2.7 s ago.
          expect(await c.complete(fence, { result: 'done', resultTtlMs: 60_000 })).toMatchObject({ ok: true });
          const next = await c.acquire(input('b'));
          expect(next.outcome).toBe('OWNER_NEW');
          // Stamped with the server's now, not 2.7 s behind it (which would shorten its lease by as much).
          expect((await serverTimeMs(server.port)) - next.meta.updatedAt).toBeLessThan(1500);
        } finally {
          await c.close();
        }
      });

      it('reloads its scripts after SCRIPT FLUSH (EVALSHA → NOSCRIPT → EVAL)', async () => {
        const c = adapter.coordinator(server.url, { prefix: 'noscript' });
        try {
          await ownFence(c, 'ns', 'a');
          await server.command('SCRIPT', 'FLUSH');
          const fence = await ownFence(c, 'ns', 'b');
          expect((await c.complete(fence, { result: 'v', resultTtlMs: 5000 })).ok).toBe(true);
        } finally {
          await c.close();
        }
      });

      it('waits for replicas after owner writes when waitReplicas is set (and pays its timeout without replicas)', async () => {
        const c = adapter.coordinator(server.url, { prefix: 'wait', waitReplicas: { replicas: 1, timeoutMs: 150 } });
        try {
          const started = Date.now();
          const fence = await ownFence(c, 'wait', 'k');
          expect(Date.now() - started).toBeGreaterThanOrEqual(140);
          expect((await c.complete(fence, { result: 'v', resultTtlMs: 5000 })).ok).toBe(true);
        } finally {
          await c.close();
        }
      });

      it('keeps at most one subscriber connection when subscribes miss their deadline (CLIENT PAUSE), and reuses it', async () => {
        const follower = adapter.coordinator(server.url, { prefix: 'pause', commandTimeoutMs: 200 });
        const owner = adapter.coordinator(server.url, { prefix: 'pause', commandTimeoutMs: 5000 });
        const pubsubClients = async () =>
          String(await server.command('CLIENT', 'LIST', 'TYPE', 'pubsub'))
            .split('\n')
            .filter((line) => line.trim().length > 0).length;
        try {
          const fences = await Promise.all(Array.from({ length: 7 }, (_, i) => ownFence(owner, 'pause', `k${i}`)));
          await follower.readMeta(fences[0]!); // connected and version-checked before the pause
          expect(await pubsubClients()).toBe(0);
          const baseline = await countClients(server); // two command connections (+ this one-shot one)
          await server.command('CLIENT', 'PAUSE', '2000', 'ALL');
          const pausedAt = Date.now();
          // Six waits one after another, each past its subscribe deadline while Redis is paused.
          for (let i = 0; i < 6; i++) {
            expect(await follower.waitForTerminal(fences[i]!, { epoch: fences[i]!.epoch, timeoutMs: 250 })).toBeNull();
          }
          await sleep(Math.max(0, 2300 - (Date.now() - pausedAt)));
          await sleep(200);
          expect(await pubsubClients()).toBeLessThanOrEqual(1);
          expect(await countClients(server)).toBeLessThanOrEqual(baseline + 1);
          // The one subscriber serves the next wait.
          const last = fences[6]!;
          const waiting = follower.waitForTerminal(last, { epoch: last.epoch, timeoutMs: 3000 });
          await sleep(100);
          await owner.complete(last, { result: 'after pause', resultTtlMs: 5000 });
          expect(await waiting).toMatchObject({ status: 'SUCCEEDED', result: 'after pause' });
          expect(await countClients(server)).toBeLessThanOrEqual(baseline + 1);
        } finally {
          await follower.close();
          await owner.close();
        }
      });

      it("never wakes a follower with another database's notice: the channel names the DB and the notice proves its run (nonce)", async () => {
        const T = Date.now();
        const clock = () => T; // both databases acquire in the same millisecond: same epoch
        const prodOwner = adapter.coordinator(`${server.url}/0`, { prefix: 'env', clock });
        const prodFollower = adapter.coordinator(`${server.url}/0`, { prefix: 'env', clock });
        const stagingOwner = adapter.coordinator(`${server.url}/1`, { prefix: 'env', clock });
        try {
          const prod = await ownFence(prodOwner, 'env', 'same-key');
          const staging = await ownFence(stagingOwner, 'env', 'same-key');
          expect(staging.epoch).toBe(prod.epoch);
          const joined = await prodFollower.acquire({
            stage: 'env',
            key: 'same-key',
            ...LEASE,
            ownerId: 'node-b',
            ownerToken: randomUUID(),
          });
          expect(joined.outcome).toBe('FOLLOWER_WAIT');
          const waiting = prodFollower.waitForTerminal(prod, { epoch: joined.meta.epoch, timeoutMs: 3000 });
          let settled: unknown;
          void waiting.then((event) => (settled = event));
          await sleep(50);
          await stagingOwner.complete(staging, { result: 'STAGING VALUE', resultTtlMs: 5000 });
          // A notice on the right channel and epoch, but not of the run joined (wrong nonce): ignored too.
          const channel = noticeChannel('env', flightKeys('env', prod).tag, 0);
          await server.command('SPUBLISH', channel, `0000000000000000 ${prod.epoch} SUCCEEDED 6 FORGED`);
          await sleep(100);
          expect(settled).toBeUndefined();
          await prodOwner.complete(prod, { result: 'PROD VALUE', resultTtlMs: 5000 });
          expect(await waiting).toMatchObject({ status: 'SUCCEEDED', epoch: prod.epoch, result: 'PROD VALUE' });
          // The staging notice never reached db 0's subscriber; the forged one did, and was refused.
          expect(prodFollower.notifications.received).toBe(2);
        } finally {
          await Promise.all([prodOwner.close(), prodFollower.close(), stagingOwner.close()]);
        }
      });

      it('counts a wait covered only once the re-subscription after a reconnect is confirmed', async () => {
        const driver = adapter.driver(server.url);
        let holdSubscribes: Promise<void> | undefined;
        const delayed: RedisDriver = {
          ...driver,
          db: driver.db,
          evalsha: (sha, keys, args) => driver.evalsha(sha, keys, args),
          eval: (source, keys, args) => driver.eval(source, keys, args),
          createSubscriber: (handlers) => {
            const sub = driver.createSubscriber({
              onMessage: (channel, message) => handlers.onMessage(channel, message),
              onReconnect: () => {
                // The connection is 'ready' again, but the re-subscription is slow to be confirmed.
                holdSubscribes = sleep(400).then(() => undefined);
                handlers.onReconnect();
              },
            });
            return {
              subscribe: async (channels) => {
                if (holdSubscribes) await holdSubscribes;
                await sub.subscribe(channels);
              },
              unsubscribe: (channels) => sub.unsubscribe(channels),
              close: () => sub.close(),
            };
          },
          close: () => driver.close(),
        };
        const follower = createRedisCoordinator(delayed, { prefix: 'resub' });
        const owner = adapter.coordinator(server.url, { prefix: 'resub' });
        try {
          const keep = await ownFence(owner, 'rs', 'keep');
          const kept = follower.waitForTerminal(keep, { epoch: keep.epoch, timeoutMs: 5000 });
          await sleep(50);
          await server.command('CLIENT', 'KILL', 'TYPE', 'pubsub');
          await sleep(100); // reconnected ('ready'), re-subscription not confirmed yet
          // A follower joins in that window, and its owner completes at once.
          const fence = await ownFence(owner, 'rs', 'window');
          const joined = await follower.acquire({ stage: 'rs', key: 'window', ...LEASE, ownerId: 'node-b', ownerToken: randomUUID() });
          const waiting = follower.waitForTerminal(fence, { epoch: joined.meta.epoch, timeoutMs: 3_600_000 });
          await owner.complete(fence, { result: 'in the window', resultTtlMs: 5000 });
          expect(await waiting).toMatchObject({ status: 'SUCCEEDED', result: 'in the window' });
          await owner.complete(keep, { result: 'kept', resultTtlMs: 5000 });
          expect(await kept).toMatchObject({ status: 'SUCCEEDED' });
        } finally {
          await follower.close();
          await owner.close();
        }
      });

      it('leaves no key without a TTL', async () => {
        expect(await scanKeysWithoutTtl(server, '*')).toEqual([]);
      });
    });

    describe('deadlines, sizes and typed errors', () => {
      it('times a wait out on its localClock (the Clock port), not on the process timers', async () => {
        const clock = createManualClock(Date.now());
        const c = adapter.coordinator(url, { prefix, localClock: clock });
        try {
          const fence = await ownFence(c, 'clock', randomUUID());
          let outcome: unknown = 'waiting';
          const waiting = c.waitForTerminal(fence, { epoch: fence.epoch, timeoutMs: 60_000 }).then((event) => (outcome = event));
          await sleep(100);
          expect(outcome).toBe('waiting');
          expect(clock.pending).toBeGreaterThan(0);
          await clock.advance(60_000);
          await waiting;
          expect(outcome).toBeNull();
          expect(clock.pending).toBe(0);
        } finally {
          await c.close();
        }
      });

      it('rejects with FlightCoordinationError by the deadline when Redis is blackholed, and never hangs waiters', async () => {
        const sockets = new Set<net.Socket>();
        const blackhole = net.createServer((socket) => {
          sockets.add(socket);
          socket.on('error', () => undefined);
        });
        await new Promise<void>((resolve) => blackhole.listen(0, '127.0.0.1', resolve));
        const { port } = blackhole.address() as net.AddressInfo;
        const c = adapter.coordinator(`redis://127.0.0.1:${port}`, { prefix: 'bh', commandTimeoutMs: 200 });
        try {
          // The server never answers: only the command deadline can end the call.
          const error = await c.acquire({ stage: 'bh', key: 'k', ...LEASE, ownerId: 'a', ownerToken: 't' }).catch((e: unknown) => e);
          expect(error).toBeInstanceOf(FlightCoordinationError);
          expect(await c.waitForTerminal({ stage: 'bh', key: 'k' }, { epoch: 1, timeoutMs: 300 })).toBeNull();
        } finally {
          await c.close();
          for (const socket of sockets) socket.destroy();
          blackhole.close();
        }
      });

      it('stores a compressed result as bytes without base64: the owner, a follower of another node, replays (script and SET NX GET) and readResult get it whole', async () => {
        const p = `${prefix}-bytes`;
        const coordinators = [0, 1, 2].map(() => adapter.coordinator(url, { prefix: p }));
        const [a, b, c] = coordinators.map((coordinator, i) =>
          createSingleFlight({ coordinator, mode: 'distributed', nodeId: `bytes-${i}`, defaults: { l1: { enabled: false } } }),
        );
        const driver = adapter.driver(url);
        try {
          expect(coordinators.every((x) => x.storesBytes === true)).toBe(true);
          const big = { text: 'lorem ipsum dolor sit amet, '.repeat(3600), n: [1, 2, 3] }; // about 100 KB of JSON
          const ref = { stage: 'bytes', key: randomUUID() };
          let runs = 0;
          let release!: () => void;
          const gate = new Promise<void>((resolve) => (release = resolve));
          let started!: () => void;
          const ownerStarted = new Promise<void>((resolve) => (started = resolve));
          const owner = a!.execute(ref.stage, ref.key, async () => {
            runs++;
            started();
            await gate;
            return big;
          });
          // Events, not time: B asks once A's run is under way, and A finishes once B follows it.
          await ownerStarted;
          const joined = new Promise<void>((resolve) => b!.on('follower', () => resolve()));
          const follower = b!.execute(ref.stage, ref.key, async () => {
            runs++;
            return { wrong: true };
          });
          await joined;
          release();
          expect(await owner).toMatchObject({ role: 'owner', value: big });
          expect(await follower).toMatchObject({ role: 'follower', value: big });

          // Stored as the record, then `f2.b.<crc>.` and the deflated bytes: smaller than the base64 text form.
          const stored = (await driver.getBuffer!(flightKeys(p, ref).meta))!;
          const at = stored.indexOf('f2.b.');
          expect(at).toBeGreaterThan(0);
          const textForm = createEnvelopeCodec().encode(big, { maxBytes: 1 << 24 });
          expect(stored.length - at).toBeLessThan(textForm.length * 0.8);

          // A new node replays it through the acquire script (it has not seen the server clock yet), then,
          // once a run of its own showed it the server clock, through SET NX GET.
          expect(await c!.execute(ref.stage, ref.key, async () => ({ wrong: true }))).toMatchObject({ role: 'replay', value: big });
          await c!.execute('bytes', randomUUID(), async () => 'own');
          expect(await c!.execute(ref.stage, ref.key, async () => ({ wrong: true }))).toMatchObject({ role: 'replay', value: big });
          expect(runs).toBe(1);
          const read = await coordinators[2]!.readResult(ref);
          expect(read).toBeInstanceOf(Uint8Array);
          expect(Buffer.from(read as Uint8Array)).toEqual(stored.subarray(at));
          expect(createEnvelopeCodec().decode(read!, { maxBytes: 1 << 24 })).toEqual(big);

          // A result below the compression threshold stays text.
          const small = { stage: 'bytes', key: randomUUID() };
          await a!.execute(small.stage, small.key, async () => ({ small: true }));
          expect(typeof (await coordinators[1]!.readResult(small))).toBe('string');
        } finally {
          await Promise.all([a, b, c].map((f) => f!.close()));
          await Promise.all(coordinators.map((x) => x.close()));
          await driver.close();
        }
      });

      it('checks the payload size before sending', async () => {
        const c = adapter.coordinator(url, { prefix: `${prefix}-size`, maxPayloadBytes: 1024 });
        try {
          const fence = await ownFence(c, 'size', 'k');
          await expect(c.complete(fence, { result: 'x'.repeat(2048), resultTtlMs: 5000 })).rejects.toBeInstanceOf(
            FlightResultTooLargeError,
          );
          expect((await c.complete(fence, { result: 'x'.repeat(1000), resultTtlMs: 5000 })).ok).toBe(true);
        } finally {
          await c.close();
        }
      });

      it('checks the server version once, on first use: Redis >= 7.0 passes, an older server fails with FlightRedisVersionError', async () => {
        expect(String(await runScriptOn(adapter.driver(url)))).toMatch(/^[7-9]\.|^\d{2,}\./);
        // What the probe answers on Redis 6 (no redis.REDIS_VERSION there): ''.
        const driver = adapter.driver(url);
        const calls: string[] = [];
        const old: RedisDriver = {
          db: driver.db,
          evalsha: (sha, keys, args) => {
            calls.push(sha);
            return sha === LUA_SCRIPTS.probe.sha ? Promise.resolve('') : driver.evalsha(sha, keys, args);
          },
          eval: (source, keys, args) => driver.eval(source, keys, args),
          createSubscriber: (handlers) => driver.createSubscriber(handlers),
          close: () => driver.close(),
        };
        const c = createRedisCoordinator(old, { prefix: `${prefix}-version` });
        try {
          const error = await c.acquire({ stage: 'v', key: 'k', ...LEASE, ownerId: 'a', ownerToken: 't' }).catch((e: unknown) => e);
          expect(error).toBeInstanceOf(FlightRedisVersionError);
          expect(error).toMatchObject({ code: 'E_FLIGHT_REDIS_VERSION' });
          expect(calls).toEqual([LUA_SCRIPTS.probe.sha]); // nothing else was sent
          // Hybrid mode does not hide it: a deployment error, not an outage.
          const hybrid = createSingleFlight({ coordinator: c, mode: 'hybrid' });
          await expect(hybrid.run('v', 'k2', () => 'x')).rejects.toBeInstanceOf(FlightRedisVersionError);
        } finally {
          await c.close();
        }
        expect(() => assertRedisVersion('6.2.14')).toThrow(FlightRedisVersionError);
        expect(() => assertRedisVersion('7.0.15')).not.toThrow();
      });

      it('maps script argument errors to FlightValidationError', async () => {
        const driver = adapter.driver(url);
        try {
          const error = await runScript(driver, 'lockAcquire', [`${prefix}-bad`], ['token', 'not-a-number']).catch((e: unknown) => e);
          expect(toFlightRedisError(error, 'lockAcquire')).toBeInstanceOf(FlightValidationError);
        } finally {
          await driver.close();
        }
      });
    });

    describe('session lock', () => {
      it('is token-checked: one holder at a time, waits, renews, releases', async () => {
        const lock = adapter.sessionLock(url, { prefix });
        const session = `s-${randomUUID()}`;
        const first = await lock.acquire(session, { ttlMs: 5000, waitMs: 0 });
        await expect(lock.acquire(session, { ttlMs: 5000, waitMs: 0 })).rejects.toBeInstanceOf(FlightLockTimeoutError);
        const waiting = lock.acquire(session, { ttlMs: 5000, waitMs: 2000 });
        await sleep(60);
        await first.renew(5000);
        expect(await first.release()).toBe(true);
        const second = await waiting;
        expect(second.token).not.toBe(first.token);
        expect(await first.release()).toBe(false);
        await expect(first.renew()).rejects.toBeInstanceOf(FlightLockLostError);
        expect(await second.release()).toBe(true);
        await lock.close();
      });

      it('expires by its TTL', async () => {
        const lock = adapter.sessionLock(url, { prefix });
        const session = `s-${randomUUID()}`;
        const held = await lock.acquire(session, { ttlMs: 100, waitMs: 0 });
        const next = await lock.acquire(session, { ttlMs: 5000, waitMs: 1000 });
        await expect(held.renew()).rejects.toBeInstanceOf(FlightLockLostError);
        expect(await next.release()).toBe(true);
        await lock.close();
      });
    });
  });
}
