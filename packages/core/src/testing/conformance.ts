/**
 * The coordinator conformance suite: any `InspectableCoordinator` (memory, ioredis, node-redis, standalone
 * or cluster) registers it in one call and proves it obeys the state machine of `state/transitions.ts`:
 * every transition and outcome, fencing, TTL/expiry, terminal events, and a model-based run of random
 * interleavings from several simulated nodes compared step by step with the pure model.
 *
 * ```ts
 * registerCoordinatorConformance({ name: 'memory', create: (now) => ({ coordinator: createMemoryCoordinator({ clock: ... }) }) });
 * ```
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { InspectableCoordinator } from '../ports/coordinator.js';
import type { AcquireInput, Fence, FailureRecord, FlightRef, LeaseTerms } from '../state/types.js';
import { runModelComparison } from './model.js';
import { registerStreamConformance } from './stream-conformance.js';

export interface ConformanceTarget {
  coordinator: InspectableCoordinator;
  /** Called after each test. */
  cleanup?: () => Promise<void> | void;
}

export interface ConformanceOptions {
  name: string;
  /** Creates a coordinator whose lease arithmetic reads time from `now` (the suite moves it). */
  create: (now: () => number) => Promise<ConformanceTarget> | ConformanceTarget;
  /** Runs of the model-based property. @default 100 */
  modelRuns?: number;
  /**
   * The coordinator stores `AcquireInput.traceparent` with a new owner record and returns it in
   * `FlightMeta.traceparent`; the suite then requires it. Either way, a coordinator that returns one
   * must return the current owner's, never a previous owner's. @default false
   */
  storesTraceparent?: boolean;
}

export const LEASE: LeaseTerms = { takeoverAfterMs: 3000, leaseTtlMs: 6000, maxRunMs: 20_000 };
const STAGE = 'conformance';

export function registerCoordinatorConformance(options: ConformanceOptions): void {
  describe(`FlightCoordinator conformance: ${options.name}`, () => {
    let time = 0;
    let target: ConformanceTarget;
    let c: InspectableCoordinator;
    const now = () => time;
    const advance = (ms: number) => {
      time += ms;
    };

    beforeEach(async () => {
      time = Date.now();
      target = await options.create(now);
      c = target.coordinator;
    });
    afterEach(async () => {
      await target?.cleanup?.();
    });

    const ref = (suffix = ''): FlightRef => ({ stage: STAGE, key: `k-${randomUUID()}${suffix}` });
    const acquireAs = (r: FlightRef, ownerId: string, extra: Partial<AcquireInput> = {}) =>
      c.acquire({ ...r, ...LEASE, ownerId, ownerToken: randomUUID(), ...extra });
    const fenceOf = (r: FlightRef, meta: { ownerId: string; ownerToken: string; epoch: number }): Fence => ({
      ...r,
      ownerId: meta.ownerId,
      ownerToken: meta.ownerToken,
      epoch: meta.epoch,
    });
    const failure = (retryable: boolean): FailureRecord => ({
      type: retryable ? 'PROVIDER' : 'VALIDATION',
      code: retryable ? 'E_UPSTREAM_502' : 'E_BAD_INPUT',
      message: 'boom',
      retryable,
    });
    async function owner(r: FlightRef, id = 'node-a') {
      const reply = await acquireAs(r, id);
      expect(reply.outcome).toBe('OWNER_NEW');
      const fence = fenceOf(r, reply.meta);
      expect((await c.markRunning(fence, LEASE)).ok).toBe(true);
      return fence;
    }

    it('creates a PENDING flight for the first caller (OWNER_NEW) with every metadata field', async () => {
      const r = ref();
      const reply = await acquireAs(r, 'node-a', { sessionId: 's-1' });
      expect(reply.outcome).toBe('OWNER_NEW');
      expect(reply.meta).toMatchObject({
        status: 'PENDING',
        stage: STAGE,
        requestKey: r.key,
        sessionId: 's-1',
        ownerId: 'node-a',
        takeovers: 0,
        createdAt: time,
        heartbeatAt: time,
        expireAt: time + LEASE.leaseTtlMs,
        deadlineAt: time + LEASE.maxRunMs,
        retryable: false,
        errorType: '',
      });
      expect(reply.meta.epoch).toBeGreaterThanOrEqual(time * 1000);
      expect(await c.readMeta(r)).toEqual(reply.meta);
    });

    it('creates the record RUNNING for an owner that runs at once (startRunning), PENDING otherwise', async () => {
      const r = ref();
      const reply = await acquireAs(r, 'node-a', { startRunning: true });
      expect(reply).toMatchObject({ outcome: 'OWNER_NEW', meta: { status: 'RUNNING', heartbeatAt: time } });
      const fence = fenceOf(r, reply.meta);
      // An owner that never called markRunning renews and completes.
      advance(1000);
      expect(await c.heartbeat(fence, LEASE)).toMatchObject({ ok: true, meta: { status: 'RUNNING', heartbeatAt: time } });
      expect((await c.markRunning(fence, LEASE)).ok).toBe(true);
      // The same token repeated is the same owner, still RUNNING.
      expect(await c.acquire({ ...r, ...LEASE, ownerId: 'node-a', ownerToken: fence.ownerToken, startRunning: true })).toMatchObject({
        outcome: 'OWNER_NEW',
        meta: { status: 'RUNNING', epoch: fence.epoch },
      });
      expect((await c.complete(fence, { result: 'v', resultTtlMs: 60_000 })).ok).toBe(true);
      // A takeover created RUNNING too.
      const soft = ref();
      const first = await owner(soft);
      await c.fail(first, { failure: failure(true), ttlMs: 10_000 });
      expect(await acquireAs(soft, 'node-b', { startRunning: true })).toMatchObject({
        outcome: 'OWNER_TAKEOVER',
        meta: { status: 'RUNNING' },
      });
      expect(await acquireAs(ref(), 'node-a', { startRunning: false })).toMatchObject({ meta: { status: 'PENDING' } });
    });

    it('gives each run its own public nonce, the same for a repeated acquire, shown to its followers', async () => {
      const r = ref();
      const first = await acquireAs(r, 'node-a');
      expect(first.meta.nonce).toMatch(/^[0-9a-f]{16}$/);
      expect(first.meta.nonce).not.toContain(first.meta.ownerToken);
      const follower = await acquireAs(r, 'node-b');
      expect(follower.meta.nonce).toBe(first.meta.nonce);
      const again = await c.acquire({ ...r, ...LEASE, ownerId: 'node-a', ownerToken: first.meta.ownerToken });
      expect(again.meta.nonce).toBe(first.meta.nonce);
      await c.fail(fenceOf(r, first.meta), { failure: failure(true), ttlMs: 10_000 });
      const next = await acquireAs(r, 'node-c');
      expect(next.outcome).toBe('OWNER_TAKEOVER');
      expect(next.meta.nonce).not.toBe(first.meta.nonce);
    });

    it('makes later callers followers of the live owner (FOLLOWER_WAIT) and repeats the owner outcome for the same token', async () => {
      const r = ref();
      const first = await acquireAs(r, 'node-a');
      const second = await acquireAs(r, 'node-b');
      expect(second.outcome).toBe('FOLLOWER_WAIT');
      expect(second.meta.epoch).toBe(first.meta.epoch);
      expect(second.meta.ownerId).toBe('node-a');
      const again = await c.acquire({ ...r, ...LEASE, ownerId: 'node-a', ownerToken: first.meta.ownerToken });
      expect(again.outcome).toBe('OWNER_NEW');
      expect(again.meta.epoch).toBe(first.meta.epoch);
    });

    it("returns the owner's traceparent to its followers and replays; a new owner never keeps the previous one", async () => {
      const stores = options.storesTraceparent ?? false;
      const tpA = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
      const tpC = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
      const r = ref();
      const first = await acquireAs(r, 'node-a', { traceparent: tpA });
      expect(first.outcome).toBe('OWNER_NEW');
      const follower = await acquireAs(r, 'node-b', { traceparent: '00-11111111111111111111111111111111-2222222222222222-01' });
      expect(follower.outcome).toBe('FOLLOWER_WAIT');
      for (const meta of [first.meta, follower.meta, await c.readMeta(r)]) {
        if (stores) expect(meta?.traceparent).toBe(tpA);
        else expect([undefined, tpA]).toContain(meta?.traceparent);
      }
      // A retryable failure is taken over by node-c, which stored its own span; node-d's takeover had none.
      expect((await c.fail(fenceOf(r, first.meta), { failure: failure(true), ttlMs: 5000 })).ok).toBe(true);
      const takeover = await acquireAs(r, 'node-c', { traceparent: tpC });
      expect(takeover.outcome).toBe('OWNER_TAKEOVER');
      if (stores) expect(takeover.meta.traceparent).toBe(tpC);
      else expect([undefined, tpC]).toContain(takeover.meta.traceparent);
      expect((await c.complete(fenceOf(r, takeover.meta), { result: '"v"', resultTtlMs: 5000 })).ok).toBe(true);
      const replay = await acquireAs(r, 'node-b');
      expect(replay.outcome).toBe('REPLAY_SUCCESS');
      if (stores) expect(replay.meta.traceparent).toBe(tpC);
      else expect([undefined, tpC]).toContain(replay.meta.traceparent);

      const r2 = ref();
      const owned = await acquireAs(r2, 'node-a', { traceparent: tpA });
      expect((await c.fail(fenceOf(r2, owned.meta), { failure: failure(true), ttlMs: 5000 })).ok).toBe(true);
      const untraced = await acquireAs(r2, 'node-d');
      expect(untraced.outcome).toBe('OWNER_TAKEOVER');
      expect(untraced.meta.traceparent ?? '').toBe('');
      expect((await c.readMeta(r2))?.traceparent ?? '').toBe('');
    });

    it('moves PENDING → RUNNING only for the fenced owner, and renews the lease on heartbeat', async () => {
      const r = ref();
      const { meta } = await acquireAs(r, 'node-a');
      const fence = fenceOf(r, meta);
      expect(await c.heartbeat(fence, LEASE)).toMatchObject({ ok: false, code: 'FENCED', status: 'PENDING' });
      expect(await c.markRunning({ ...fence, ownerToken: 'forged' }, LEASE)).toMatchObject({ ok: false, code: 'FENCED' });
      expect(await c.markRunning({ ...fence, epoch: fence.epoch - 1 }, LEASE)).toMatchObject({ ok: false, code: 'FENCED' });
      const running = await c.markRunning(fence, LEASE);
      expect(running).toMatchObject({ ok: true, meta: { status: 'RUNNING' } });
      advance(1000);
      const beat = await c.heartbeat(fence, LEASE);
      expect(beat).toMatchObject({ ok: true, meta: { status: 'RUNNING', heartbeatAt: time, expireAt: time + LEASE.leaseTtlMs } });
      expect(await c.heartbeat({ ...fence, ownerId: 'node-b' }, LEASE)).toMatchObject({ ok: false, code: 'FENCED', status: 'RUNNING' });
    });

    it('counts each caller that joins a live epoch once, cluster-wide (followers); polls and new epochs do not add up', async () => {
      const r = ref();
      const fence = await owner(r);
      expect((await c.readMeta(r))?.followers).toBe(0);
      const b = await acquireAs(r, 'node-b');
      expect(b).toMatchObject({ outcome: 'FOLLOWER_WAIT', meta: { followers: 1 } });
      expect((await acquireAs(r, 'node-c')).meta.followers).toBe(2);
      expect((await acquireAs(r, 'node-b', { joinEpoch: b.meta.epoch })).meta.followers).toBe(2);
      const done = await c.complete(fence, { result: 'v', resultTtlMs: 60_000 });
      expect(done).toMatchObject({ ok: true, meta: { followers: 2 } });
      expect((await acquireAs(r, 'node-d')).meta.followers).toBe(2); // a replay is not a follower

      const other = ref();
      const first = await owner(other);
      await acquireAs(other, 'node-b');
      await c.fail(first, { failure: failure(true), ttlMs: 10_000 });
      const next = await acquireAs(other, 'node-c');
      expect(next).toMatchObject({ outcome: 'OWNER_TAKEOVER', meta: { followers: 0 } });
    });

    it('completes atomically: SUCCEEDED with the result, replayed to every later caller', async () => {
      const r = ref();
      const fence = await owner(r);
      const done = await c.complete(fence, { result: 'payload-1', resultTtlMs: 60_000 });
      expect(done).toMatchObject({ ok: true, meta: { status: 'SUCCEEDED', expireAt: time + 60_000 } });
      const replay = await acquireAs(r, 'node-b');
      expect(replay.outcome).toBe('REPLAY_SUCCESS');
      expect(replay.result).toBe('payload-1');
      expect(await c.readResult(r)).toBe('payload-1');
      // A lost reply retried by the same owner is accepted without change; anyone else is fenced.
      expect((await c.complete(fence, { result: 'payload-1', resultTtlMs: 60_000 })).ok).toBe(true);
      expect(await c.complete({ ...fence, ownerToken: 'other' }, { result: 'payload-2', resultTtlMs: 60_000 })).toMatchObject({
        ok: false,
        code: 'FENCED',
        status: 'SUCCEEDED',
      });
      expect(await c.readResult(r)).toBe('payload-1');
    });

    it('replays a non-retryable failure and lets the next caller take over a retryable one', async () => {
      const hard = ref();
      const f1 = await owner(hard);
      expect(await c.fail(f1, { failure: failure(false), ttlMs: 10_000 })).toMatchObject({ ok: true, meta: { status: 'FAILED' } });
      const replay = await acquireAs(hard, 'node-b');
      expect(replay.outcome).toBe('REPLAY_FAILURE');
      expect(replay.meta).toMatchObject({ errorType: 'VALIDATION', errorCode: 'E_BAD_INPUT', errorMessage: 'boom', retryable: false });
      expect(await c.complete(f1, { result: 'late', resultTtlMs: 1000 })).toMatchObject({ ok: false, code: 'FENCED', status: 'FAILED' });

      const soft = ref();
      const f2 = await owner(soft);
      await c.fail(f2, { failure: failure(true), ttlMs: 10_000 });
      const next = await acquireAs(soft, 'node-b');
      expect(next.outcome).toBe('OWNER_TAKEOVER');
      expect(next.meta.epoch).toBeGreaterThan(f2.epoch);
      expect(next.meta).toMatchObject({ status: 'PENDING', ownerId: 'node-b', takeovers: 1, errorType: '', retryable: false });
      expect(await c.heartbeat(f2, LEASE)).toMatchObject({ ok: false, code: 'FENCED' });
    });

    it('takes over an owner whose heartbeat is stale, and fences every write of the old epoch', async () => {
      const r = ref();
      const old = await owner(r, 'node-a');
      advance(LEASE.takeoverAfterMs);
      expect((await acquireAs(r, 'node-b')).outcome).toBe('FOLLOWER_WAIT');
      advance(1);
      const next = await acquireAs(r, 'node-b');
      expect(next.outcome).toBe('OWNER_TAKEOVER');
      expect(next.meta.epoch).toBeGreaterThan(old.epoch);
      const fresh = fenceOf(r, next.meta);
      expect(await c.heartbeat(old, LEASE)).toMatchObject({ ok: false, code: 'FENCED' });
      expect(await c.complete(old, { result: 'stale', resultTtlMs: 1000 })).toMatchObject({ ok: false, code: 'FENCED' });
      expect(await c.fail(old, { failure: failure(false), ttlMs: 1000 })).toMatchObject({ ok: false, code: 'FENCED' });
      expect((await c.markRunning(fresh, LEASE)).ok).toBe(true);
      expect((await c.complete(fresh, { result: 'fresh', resultTtlMs: 1000 })).ok).toBe(true);
      expect(await c.readResult(r)).toBe('fresh');
    });

    it('refuses renewal past the run deadline and marks the run EXPIRED; expire() does the same on demand', async () => {
      const r = ref();
      const fence = await owner(r);
      for (let t = 0; t < LEASE.maxRunMs; t += 2000) {
        advance(2000);
        const beat = await c.heartbeat(fence, LEASE);
        if (t + 2000 >= LEASE.maxRunMs) expect(beat).toMatchObject({ ok: false, code: 'FENCED', status: 'EXPIRED' });
        else expect(beat.ok).toBe(true);
      }
      expect((await c.readMeta(r))?.status).toBe('EXPIRED');
      expect((await acquireAs(r, 'node-b')).outcome).toBe('OWNER_TAKEOVER');

      const other = ref();
      const live = await owner(other);
      expect(await c.expire(other, { ttlMs: 10_000 })).toMatchObject({ ok: false, code: 'NOT_DUE' });
      for (let t = 2000; t < LEASE.maxRunMs; t += 2000) {
        advance(2000);
        expect((await c.heartbeat(live, LEASE)).ok).toBe(true);
      }
      advance(2000);
      expect(await c.expire(other, { ttlMs: 10_000 })).toMatchObject({ ok: true, meta: { status: 'EXPIRED' } });
      expect(await c.expire(other, { ttlMs: 10_000 })).toMatchObject({ ok: false, code: 'NOT_ACTIVE', status: 'EXPIRED' });
    });

    it('cancels an active flight: replayed to its followers, taken over by new callers', async () => {
      const r = ref();
      const fence = await owner(r);
      const follower = await acquireAs(r, 'node-b');
      expect(await c.cancel(r, { reason: 'user left', ttlMs: 10_000 })).toMatchObject({ ok: true, meta: { status: 'CANCELLED' } });
      expect(await c.heartbeat(fence, LEASE)).toMatchObject({ ok: false, code: 'FENCED', status: 'CANCELLED' });
      const replay = await acquireAs(r, 'node-b', { joinEpoch: follower.meta.epoch });
      expect(replay.outcome).toBe('REPLAY_FAILURE');
      expect(replay.meta).toMatchObject({ status: 'CANCELLED', errorType: 'CANCELLED', errorMessage: 'user left' });
      expect((await acquireAs(r, 'node-c')).outcome).toBe('OWNER_TAKEOVER');
      expect(await c.cancel(ref(), { reason: 'x', ttlMs: 1000 })).toMatchObject({ ok: false, code: 'NOT_ACTIVE', status: null });
    });

    it('cancels only the epoch it names: a delayed cancel leaves a newer run alone', async () => {
      const r = ref();
      const old = await owner(r);
      await c.fail(old, { failure: failure(true), ttlMs: 10_000 });
      const next = await acquireAs(r, 'node-b', { startRunning: true });
      expect(next.outcome).toBe('OWNER_TAKEOVER');
      expect(await c.cancel(r, { reason: 'late', ttlMs: 10_000, epoch: old.epoch })).toEqual({
        ok: false,
        code: 'EPOCH_MISMATCH',
        status: 'RUNNING',
      });
      expect(await c.readMeta(r)).toMatchObject({ status: 'RUNNING', epoch: next.meta.epoch });
      expect(await c.cancel(r, { reason: 'now', ttlMs: 10_000, epoch: next.meta.epoch })).toMatchObject({
        ok: true,
        meta: { status: 'CANCELLED', epoch: next.meta.epoch, errorMessage: 'now' },
      });
    });

    it('forget: new callers start a new run; the forgotten owner and its followers keep it; its completion is not stored', async () => {
      const r = ref();
      const fence = await owner(r);
      const follower = await acquireAs(r, 'node-b');
      expect(follower.outcome).toBe('FOLLOWER_WAIT');
      const forgotten = await c.forget(r);
      expect(forgotten).toMatchObject({ ok: true, meta: { status: 'RUNNING', epoch: fence.epoch, forgottenEpoch: fence.epoch } });
      // The run's own follower keeps waiting for it; its owner is told FORGOTTEN, not FENCED.
      expect(await acquireAs(r, 'node-b', { joinEpoch: fence.epoch })).toMatchObject({
        outcome: 'FOLLOWER_WAIT',
        meta: { epoch: fence.epoch },
      });
      expect(await c.heartbeat(fence, LEASE)).toMatchObject({ ok: false, code: 'FORGOTTEN' });
      // The next caller starts a new run.
      const second = await acquireAs(r, 'node-c', { startRunning: true });
      expect(second.outcome).toBe('OWNER_TAKEOVER');
      expect(second.meta.epoch).toBeGreaterThan(fence.epoch);
      expect(second.meta.forgottenEpoch).toBe(fence.epoch);
      const third = await acquireAs(r, 'node-d');
      expect(third).toMatchObject({ outcome: 'FOLLOWER_WAIT', meta: { epoch: second.meta.epoch } });
      // The forgotten run ends: refused as FORGOTTEN, its notice still wakes its own waiters (no result).
      expect(await c.heartbeat(fence, LEASE)).toMatchObject({ ok: false, code: 'FORGOTTEN' });
      // The record holds the newer run, so a notice sent before the waiter's subscription is not recoverable
      // by a re-read (its followers fall back to polling): a repeated completion publishes it again.
      let notice: Awaited<ReturnType<InspectableCoordinator['waitForTerminal']>> = null;
      for (let attempt = 1; attempt <= 5 && !notice; attempt++) {
        const waiting = c.waitForTerminal(r, { epoch: fence.epoch, timeoutMs: 1000 });
        await sleep(20 * attempt);
        expect(await c.complete(fence, { result: 'old', resultTtlMs: 60_000 })).toMatchObject({ ok: false, code: 'FORGOTTEN' });
        notice = await waiting;
      }
      expect(notice).toMatchObject({ status: 'SUCCEEDED', epoch: fence.epoch });
      expect(notice?.result).toBeUndefined();
      expect(await c.readMeta(r)).toMatchObject({ status: 'RUNNING', epoch: second.meta.epoch });
      // The new run's value is the one stored and replayed.
      expect((await c.complete(fenceOf(r, second.meta), { result: 'new', resultTtlMs: 60_000 })).ok).toBe(true);
      expect(await acquireAs(r, 'node-e')).toMatchObject({ outcome: 'REPLAY_SUCCESS', result: 'new' });
    });

    it('forget: a forgotten run that was not re-acquired stores neither its result nor its failure', async () => {
      const r = ref();
      const fence = await owner(r);
      expect((await c.forget(r)).ok).toBe(true);
      expect(await c.complete(fence, { result: 'old', resultTtlMs: 60_000 })).toMatchObject({
        ok: false,
        code: 'FORGOTTEN',
        status: 'SUCCEEDED',
      });
      expect(await c.readResult(r)).toBeNull();
      expect(await acquireAs(r, 'node-b')).toMatchObject({ outcome: 'OWNER_TAKEOVER' });

      const f = ref();
      const failing = await owner(f);
      expect((await c.forget(f)).ok).toBe(true);
      expect(await c.fail(failing, { failure: failure(false), ttlMs: 10_000 })).toMatchObject({
        ok: false,
        code: 'FORGOTTEN',
        status: 'FAILED',
      });
      expect(await acquireAs(f, 'node-b')).toMatchObject({ outcome: 'OWNER_TAKEOVER' });
    });

    it('forget: drops a stored result or failure so the next caller runs again; NOT_FOUND without a record', async () => {
      const r = ref();
      const fence = await owner(r);
      expect((await c.complete(fence, { result: 'v', resultTtlMs: 60_000 })).ok).toBe(true);
      expect(await c.forget(r)).toMatchObject({ ok: true, meta: { status: 'SUCCEEDED', forgottenEpoch: fence.epoch } });
      expect((await c.forget(r)).ok).toBe(true);
      expect(await c.readResult(r)).toBeNull();
      const again = await acquireAs(r, 'node-b');
      expect(again.outcome).toBe('OWNER_TAKEOVER');
      expect(again.meta.epoch).toBeGreaterThan(fence.epoch);

      const f = ref();
      const failing = await owner(f);
      expect((await c.fail(failing, { failure: failure(false), ttlMs: 10_000 })).ok).toBe(true);
      expect((await acquireAs(f, 'node-b')).outcome).toBe('REPLAY_FAILURE');
      expect((await c.forget(f)).ok).toBe(true);
      expect((await acquireAs(f, 'node-b')).outcome).toBe('OWNER_TAKEOVER');

      expect(await c.forget(ref())).toEqual({ ok: false, code: 'NOT_FOUND', status: null });
    });

    it('forgets a flight after its TTL and keeps epochs growing when it starts again', async () => {
      const r = ref();
      const fence = await owner(r);
      await c.complete(fence, { result: 'v', resultTtlMs: 5000 });
      advance(5000);
      expect(await c.readMeta(r)).toBeNull();
      expect(await c.readResult(r)).toBeNull();
      const again = await acquireAs(r, 'node-b');
      expect(again.outcome).toBe('OWNER_NEW');
      expect(again.meta.epoch).toBeGreaterThan(fence.epoch);
      // An abandoned active flight disappears after its lease TTL.
      const lonely = ref();
      await acquireAs(lonely, 'node-a');
      advance(LEASE.leaseTtlMs);
      expect(await c.readMeta(lonely)).toBeNull();
    });

    it('wakes waiters with the terminal event, at once when already terminal, and gives null on timeout or abort', async () => {
      const r = ref();
      const fence = await owner(r);
      const waiting = c.waitForTerminal(r, { epoch: fence.epoch, timeoutMs: 5000 });
      await sleep(20);
      await c.complete(fence, { result: 'v', resultTtlMs: 60_000 });
      expect(await waiting).toMatchObject({ stage: STAGE, key: r.key, status: 'SUCCEEDED', epoch: fence.epoch });
      expect(await c.waitForTerminal(r, { epoch: fence.epoch, timeoutMs: 5000 })).toMatchObject({ status: 'SUCCEEDED' });

      const quiet = ref();
      const q = await owner(quiet);
      const started = Date.now();
      expect(await c.waitForTerminal(quiet, { epoch: q.epoch, timeoutMs: 100 })).toBeNull();
      expect(Date.now() - started).toBeGreaterThanOrEqual(90);
      const controller = new AbortController();
      const aborted = c.waitForTerminal(quiet, { epoch: q.epoch, timeoutMs: 5000, signal: controller.signal });
      controller.abort();
      expect(await aborted).toBeNull();
    });

    it('carries a small result in the SUCCEEDED event, byte for byte, when woken and when already terminal', async () => {
      // Spaces, a double space, a newline, a tab, braces, digits after a space and non-ASCII: the notice
      // format must not split or re-encode any of them.
      const payloads = ['v', 'a b  c 12 SUCCEEDED 3 x', 'line\nnext\ttab {x} ✓ ключ 🚀', ' ', ''];
      for (const payload of payloads) {
        const r = ref();
        const fence = await owner(r);
        const follower = await acquireAs(r, 'node-b');
        expect(follower.outcome).toBe('FOLLOWER_WAIT');
        const waiting = c.waitForTerminal(r, { epoch: follower.meta.epoch, timeoutMs: 5000 });
        await sleep(20);
        expect((await c.complete(fence, { result: payload, resultTtlMs: 60_000 })).ok).toBe(true);
        expect(await waiting).toEqual({ stage: STAGE, key: r.key, status: 'SUCCEEDED', epoch: fence.epoch, result: payload });
        expect(await c.waitForTerminal(r, { epoch: fence.epoch, timeoutMs: 5000 })).toMatchObject({ status: 'SUCCEEDED', result: payload });
      }
    });

    it('wakes a follower whose owner completes right after its acquire (no notice lost before the wait starts)', async () => {
      for (let i = 0; i < 5; i++) {
        const r = ref();
        const fence = await owner(r);
        const follower = await acquireAs(r, 'node-b');
        expect(follower.outcome).toBe('FOLLOWER_WAIT');
        // The owner finishes before the follower starts waiting.
        await c.complete(fence, { result: `early-${i}`, resultTtlMs: 60_000 });
        await sleep(10);
        const event = await c.waitForTerminal(r, { epoch: follower.meta.epoch, timeoutMs: 2000 });
        expect(event).toMatchObject({ status: 'SUCCEEDED', epoch: fence.epoch, result: `early-${i}` });
      }
    });

    it('does not carry a large result in the event, or carries it intact', async () => {
      const r = ref();
      const fence = await owner(r);
      const big = 'x'.repeat(64 * 1024);
      const waiting = c.waitForTerminal(r, { epoch: fence.epoch, timeoutMs: 5000 });
      await sleep(20);
      await c.complete(fence, { result: big, resultTtlMs: 60_000 });
      const event = await waiting;
      expect(event).toMatchObject({ status: 'SUCCEEDED', epoch: fence.epoch });
      expect(event!.result === undefined || event!.result === big).toBe(true);
      expect(await c.readResult(r)).toBe(big);
    });

    it('carries no result with FAILED, CANCELLED or EXPIRED events', async () => {
      const r = ref();
      const fence = await owner(r);
      const waiting = c.waitForTerminal(r, { epoch: fence.epoch, timeoutMs: 5000 });
      await sleep(20);
      await c.fail(fence, { failure: failure(false), ttlMs: 10_000 });
      const event = await waiting;
      expect(event).toMatchObject({ status: 'FAILED', epoch: fence.epoch });
      expect(event!.result).toBeUndefined();
      const other = ref();
      const f2 = await owner(other);
      await c.cancel(other, { reason: 'x', ttlMs: 10_000 });
      const cancelled = await c.waitForTerminal(other, { epoch: f2.epoch, timeoutMs: 5000 });
      expect(cancelled).toMatchObject({ status: 'CANCELLED' });
      expect(cancelled!.result).toBeUndefined();
    });

    it('keeps keys with braces, colons, spaces and unicode apart and working', async () => {
      const keys = ['{a}:b c', '{a}:b', 'a:{b c}', '}{', '  ', 'ключ ✓', '*', 'x\ny'];
      const prefix = randomUUID();
      for (const key of keys) {
        const r = { stage: STAGE, key: `${prefix}${key}` };
        const fence = await owner(r);
        await c.complete(fence, { result: `v:${key}`, resultTtlMs: 60_000 });
      }
      for (const key of keys) {
        expect(await c.readResult({ stage: STAGE, key: `${prefix}${key}` })).toBe(`v:${key}`);
      }
      expect(await c.readMeta({ stage: 'other-stage', key: `${prefix}${keys[0]}` })).toBeNull();
    });

    registerStreamConformance({ coordinator: () => c, ref, advance, lease: LEASE });

    it('matches the pure state machine on random interleavings from several nodes (model-based)', async () => {
      await runModelComparison({
        coordinator: () => c,
        now,
        advance,
        runs: options.modelRuns ?? 100,
        fc,
        expect,
      });
    });
  });
}
