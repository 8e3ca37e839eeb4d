/**
 * The state machine as pure functions: (stored record, input, now) → (reply, next record, event).
 *
 * This is the specification every coordinator implements. The in-memory coordinator calls these
 * functions directly; the Redis Lua scripts re-implement them, and the conformance suite checks
 * that both give the same replies for the same sequence of calls.
 */
import type {
  AcquireInput,
  AcquireReply,
  CancelInput,
  CancelReply,
  CompleteInput,
  ExpireReply,
  Fence,
  ForgetReply,
  FailureRecord,
  FlightMeta,
  FlightRecord,
  FlightRef,
  LeaseTerms,
  StaleCopy,
  TerminalEvent,
  WriteReply,
} from './types.js';
import { isActive } from './types.js';
import { digestOf } from '../keys/digest.js';

/**
 * What a transition decided: the reply, the record to store (`undefined` = unchanged), the event to publish
 * and the flight's stale copy to store (`undefined` = unchanged, `null` = dropped; see `StaleCopy`).
 */
export interface Transition<R> {
  reply: R;
  next?: FlightRecord | undefined;
  event?: TerminalEvent | undefined;
  stale?: StaleCopy | null | undefined;
}

/** True while `copy` may be served in one of its windows at `now`: until then a store keeps it. */
export function isStaleLive(copy: StaleCopy | null | undefined, now: number): copy is StaleCopy {
  return !!copy && Math.max(copy.revalidateUntil, copy.errorUntil) > now;
}

/**
 * The next fencing epoch: strictly above the previous one and at least `now * 1000`, so epochs keep
 * growing even when a record is lost (evicted, or Redis restarted empty) as long as the clock moves on.
 */
export function nextEpoch(previous: number, now: number): number {
  return Math.max(previous + 1, now * 1000);
}

/**
 * The public id of a run: the first 16 hex digits of SHA-1 over its owner token (a fresh random per
 * attempt), so it is random per run, the same for an idempotent repeat of the acquire, computed alike by
 * the Lua scripts (`redis.sha1hex`), and reveals nothing that could forge an owner write.
 */
export function flightNonce(ownerToken: string): string {
  return digestOf('sha1', ownerToken, 'hex').slice(0, 16);
}

/** True when the record is live at `now` (its storage TTL has not ended). */
export function isLive(record: FlightRecord | null | undefined, now: number): record is FlightRecord {
  return !!record && record.meta.expireAt > now;
}

export function fenceMatches(meta: FlightMeta, fence: Fence): boolean {
  return meta.ownerId === fence.ownerId && meta.ownerToken === fence.ownerToken && meta.epoch === fence.epoch;
}

/** True when `forget` was called on the run of `epoch` (by default the record's current run). */
export function isForgotten(meta: FlightMeta, epoch = meta.epoch): boolean {
  return meta.forgottenEpoch > 0 && meta.forgottenEpoch === epoch;
}

/** The refusal of an owner write of a forgotten run (`fence.epoch` is the record's `forgottenEpoch`). */
function forgottenReply(record: FlightRecord): WriteReply {
  return { ok: false, code: 'FORGOTTEN', status: record.meta.status, epoch: record.meta.epoch };
}

function fenced(record: FlightRecord | null): Transition<WriteReply> {
  return {
    reply: { ok: false, code: 'FENCED', status: record?.meta.status ?? null, epoch: record?.meta.epoch ?? null },
  };
}

function terminalEvent(meta: FlightMeta): TerminalEvent {
  return { stage: meta.stage, key: meta.requestKey, status: meta.status, epoch: meta.epoch };
}

/**
 * A new owner's record for `input`, replacing `previous` (null when there is none). `epoch` and `nonce`
 * default to `nextEpoch` and `flightNonce`; a coordinator whose store computed them passes its own.
 */
export function newOwnerMeta(
  input: AcquireInput,
  previous: FlightMeta | null,
  now: number,
  epoch = nextEpoch(previous?.epoch ?? 0, now),
  nonce = flightNonce(input.ownerToken),
): FlightMeta {
  const meta: FlightMeta = {
    status: input.startRunning ? 'RUNNING' : 'PENDING',
    stage: input.stage,
    requestKey: input.key,
    sessionId: input.sessionId ?? previous?.sessionId ?? '',
    ownerId: input.ownerId,
    ownerToken: input.ownerToken,
    epoch,
    takeovers: previous ? previous.takeovers + 1 : 0,
    followers: 0,
    createdAt: previous?.createdAt ?? now,
    updatedAt: now,
    heartbeatAt: now,
    expireAt: now + input.leaseTtlMs,
    deadlineAt: now + input.maxRunMs,
    retryable: false,
    errorType: '',
    errorCode: '',
    errorMessage: '',
    resultRef: '',
    nonce,
    forgottenEpoch: previous?.forgottenEpoch ?? 0,
  };
  // The new owner's span only: a takeover never keeps the previous owner's. Absent rather than empty.
  if (input.traceparent) meta.traceparent = input.traceparent;
  return meta;
}

/**
 * Join a flight or become its owner, in one atomic step. A new owner record is PENDING, or
 * RUNNING when `startRunning` is set (the owner runs at once: no `markRunning` needed).
 * - no live record, or SUCCEEDED without its result → OWNER_NEW
 * - SUCCEEDED → REPLAY_SUCCESS (with the result)
 * - FAILED: retryable → OWNER_TAKEOVER, else REPLAY_FAILURE (replayed too to a caller that followed that run
 *   and asks for its failures: `joinFailures`)
 * - CANCELLED: replayed (REPLAY_FAILURE) to callers that followed that epoch, taken over by new callers
 * - EXPIRED → OWNER_TAKEOVER
 * - PENDING/RUNNING: same ownerToken → the same owner outcome again (idempotent retry);
 *   heartbeat older than `takeoverAfterMs` or past the deadline → OWNER_TAKEOVER; else FOLLOWER_WAIT
 *   (counting the caller in `followers` unless it already joined this epoch: `joinEpoch` equal to it)
 * A new owner record keeps the caller's `traceparent` (when given); every other outcome returns the
 * stored one, so followers and replays can link to the owner's span.
 * With `acceptStale`, every outcome but REPLAY_SUCCESS also offers the flight's stale copy `stale` while
 * it may be served (`isStaleLive`), with its age and what is left of its windows.
 */
export function acquire(stored: FlightRecord | null, input: AcquireInput, now: number, stale?: StaleCopy | null): Transition<AcquireReply> {
  const decided = decideAcquire(stored, input, now);
  if (input.acceptStale && decided.reply.outcome !== 'REPLAY_SUCCESS' && isStaleLive(stale, now)) {
    decided.reply = {
      ...decided.reply,
      stale: {
        result: stale.result,
        epoch: stale.epoch,
        ageMs: now - stale.storedAt,
        revalidateForMs: stale.revalidateUntil - now,
        errorForMs: stale.errorUntil - now,
      },
    };
  }
  return decided;
}

/** `acquire` without the stale copy. */
function decideAcquire(stored: FlightRecord | null, input: AcquireInput, now: number): Transition<AcquireReply> {
  const record = isLive(stored, now) ? stored : null;
  if (record && isForgotten(record.meta)) return acquireForgotten(record.meta, input, now);
  if (!record || (record.meta.status === 'SUCCEEDED' && record.result === undefined)) {
    // A lost record keeps no epoch to build on; the clock-based floor of nextEpoch keeps epochs growing.
    const meta = newOwnerMeta(input, null, now);
    if (record) {
      meta.epoch = nextEpoch(record.meta.epoch, now);
      meta.forgottenEpoch = record.meta.forgottenEpoch;
    }
    return { reply: { outcome: 'OWNER_NEW', meta }, next: { meta } };
  }
  const current = record.meta;
  const takeover = (): Transition<AcquireReply> => {
    const meta = newOwnerMeta(input, current, now);
    return { reply: { outcome: 'OWNER_TAKEOVER', meta }, next: { meta } };
  };
  switch (current.status) {
    case 'SUCCEEDED':
      return { reply: { outcome: 'REPLAY_SUCCESS', meta: current, result: record.result } };
    case 'FAILED': {
      const ownFailure = input.joinFailures === true && input.joinEpoch === current.epoch;
      return current.retryable && !ownFailure ? takeover() : { reply: { outcome: 'REPLAY_FAILURE', meta: current } };
    }
    case 'CANCELLED':
      return input.joinEpoch === current.epoch ? { reply: { outcome: 'REPLAY_FAILURE', meta: current } } : takeover();
    case 'EXPIRED':
      return takeover();
    case 'PENDING':
    case 'RUNNING': {
      if (current.ownerToken === input.ownerToken && current.ownerId === input.ownerId) {
        return { reply: { outcome: current.takeovers > 0 ? 'OWNER_TAKEOVER' : 'OWNER_NEW', meta: current } };
      }
      const stale = now - current.heartbeatAt > input.takeoverAfterMs || now >= current.deadlineAt;
      if (stale) return takeover();
      // A caller joining this epoch for the first time is counted (its later polls pass joinEpoch).
      if (input.joinEpoch === current.epoch) return { reply: { outcome: 'FOLLOWER_WAIT', meta: current } };
      const meta: FlightMeta = { ...current, followers: current.followers + 1 };
      return { reply: { outcome: 'FOLLOWER_WAIT', meta }, next: { meta, result: record.result } };
    }
  }
}

/**
 * `acquire` on a forgotten record: it is neither joined nor replayed by new callers (they take over with a
 * new epoch); while it is active and fresh, its owner's repeated acquire and its own followers (`joinEpoch`)
 * keep the run they had.
 */
function acquireForgotten(current: FlightMeta, input: AcquireInput, now: number): Transition<AcquireReply> {
  const active = isActive(current.status);
  if (active && current.ownerToken === input.ownerToken && current.ownerId === input.ownerId) {
    return { reply: { outcome: current.takeovers > 0 ? 'OWNER_TAKEOVER' : 'OWNER_NEW', meta: current } };
  }
  const stale = now - current.heartbeatAt > input.takeoverAfterMs || now >= current.deadlineAt;
  if (active && !stale && input.joinEpoch === current.epoch) return { reply: { outcome: 'FOLLOWER_WAIT', meta: current } };
  const meta = newOwnerMeta(input, current, now);
  return { reply: { outcome: 'OWNER_TAKEOVER', meta }, next: { meta } };
}

/** Renew the lease; shared by markRunning and heartbeat. Past the deadline the run becomes EXPIRED. */
function renew(stored: FlightRecord | null, fence: Fence, lease: LeaseTerms, now: number, allowPending: boolean): Transition<WriteReply> {
  const record = isLive(stored, now) ? stored : null;
  if (record && isForgotten(record.meta, fence.epoch)) return { reply: forgottenReply(record) };
  if (!record || !fenceMatches(record.meta, fence) || !isActive(record.meta.status)) return fenced(record);
  if (record.meta.status === 'PENDING' && !allowPending) return fenced(record);
  if (now >= record.meta.deadlineAt) {
    const meta: FlightMeta = { ...record.meta, status: 'EXPIRED', updatedAt: now, expireAt: now + lease.leaseTtlMs };
    return { ...fenced({ meta }), next: { meta }, event: terminalEvent(meta) };
  }
  const meta: FlightMeta = {
    ...record.meta,
    status: 'RUNNING',
    heartbeatAt: now,
    updatedAt: now,
    expireAt: now + lease.leaseTtlMs,
  };
  return { reply: { ok: true, meta }, next: { meta, result: record.result } };
}

/** PENDING → RUNNING for the fenced owner (idempotent while RUNNING). */
export function markRunning(stored: FlightRecord | null, fence: Fence, lease: LeaseTerms, now: number) {
  return renew(stored, fence, lease, now, true);
}

/** Renew a RUNNING owner's lease. Refused (FENCED) for anyone else, and EXPIRED past the deadline. */
export function heartbeat(stored: FlightRecord | null, fence: Fence, lease: LeaseTerms, now: number) {
  return renew(stored, fence, lease, now, false);
}

/**
 * The end of a forgotten run (`complete` or `fail` with `fence.epoch` = `forgottenEpoch`): nothing is stored
 * for later callers. While the record is still that run's, it moves to `status` (without a result, still
 * forgotten, so the next caller starts a new run); a newer run's record is left alone. Either way the run's
 * terminal notice (its epoch, no result) is published so its followers ask again at once (and join the
 * newer run). Answers `FORGOTTEN`; repeating it is harmless.
 */
function endForgotten(
  record: FlightRecord,
  fence: Fence,
  status: 'SUCCEEDED' | 'FAILED',
  input: { ttlMs: number },
  now: number,
): Transition<WriteReply> {
  const event: TerminalEvent = { stage: record.meta.stage, key: record.meta.requestKey, status, epoch: fence.epoch };
  if (!fenceMatches(record.meta, fence) || !isActive(record.meta.status)) return { reply: forgottenReply(record), event };
  const meta: FlightMeta = { ...record.meta, status, updatedAt: now, expireAt: now + input.ttlMs };
  return { reply: forgottenReply({ meta }), next: { meta }, event };
}

/**
 * Forget a flight cluster-wide (Go's `singleflight.Forget`; no fence: any node may call it). On an active
 * run: no new caller joins it (the next one starts a new run, a new epoch), its owner keeps running for its
 * own callers, and its completion is never stored. On a terminal record: its stored result or failure is
 * dropped, so the next caller runs again. The record keeps its TTL and epoch; nothing is published.
 * The flight's stale copy is dropped too, whether or not there is a record. `NOT_FOUND` when there is no
 * live record. Idempotent.
 */
export function forget(stored: FlightRecord | null, _ref: FlightRef, now: number): Transition<ForgetReply> {
  const record = isLive(stored, now) ? stored : null;
  if (!record) return { reply: { ok: false, code: 'NOT_FOUND', status: null }, stale: null };
  const meta: FlightMeta = { ...record.meta, forgottenEpoch: record.meta.epoch, resultRef: '' };
  return { reply: { ok: true, meta }, next: { meta }, stale: null };
}

/**
 * Store the result and move to SUCCEEDED, atomically, with the terminal event. Idempotent for the same fence.
 * With `stale` windows, the stored result also replaces the flight's stale copy (both windows 0: the copy
 * is dropped); only a write that stores the result touches the copy, so a fenced or forgotten run never does.
 */
export function complete(stored: FlightRecord | null, fence: Fence, input: CompleteInput, now: number): Transition<WriteReply> {
  const record = isLive(stored, now) ? stored : null;
  if (record && isForgotten(record.meta, fence.epoch)) return endForgotten(record, fence, 'SUCCEEDED', { ttlMs: input.resultTtlMs }, now);
  if (!record || !fenceMatches(record.meta, fence)) return fenced(record);
  if (record.meta.status === 'SUCCEEDED') return { reply: { ok: true, meta: record.meta } };
  if (!isActive(record.meta.status)) return fenced(record);
  const meta: FlightMeta = {
    ...record.meta,
    status: 'SUCCEEDED',
    updatedAt: now,
    expireAt: now + input.resultTtlMs,
    resultRef: 'result',
  };
  const done: Transition<WriteReply> = { reply: { ok: true, meta }, next: { meta, result: input.result }, event: terminalEvent(meta) };
  if (input.stale) done.stale = staleCopyOf(input, fence.epoch, now, meta.expireAt);
  return done;
}

/** The stale copy `complete` keeps of `input.result`, or null when its windows are both 0. */
function staleCopyOf(input: CompleteInput, epoch: number, now: number, freshUntil: number): StaleCopy | null {
  const { whileRevalidateMs, ifErrorMs } = input.stale!;
  if (whileRevalidateMs <= 0 && ifErrorMs <= 0) return null;
  return {
    result: input.result,
    epoch,
    storedAt: now,
    freshUntil,
    revalidateUntil: freshUntil + Math.max(0, whileRevalidateMs),
    errorUntil: freshUntil + Math.max(0, ifErrorMs),
  };
}

/** Move to FAILED with the failure's class, code and retryability, with the terminal event. Idempotent for the same fence. */
export function fail(
  stored: FlightRecord | null,
  fence: Fence,
  input: { failure: FailureRecord; ttlMs: number },
  now: number,
): Transition<WriteReply> {
  const record = isLive(stored, now) ? stored : null;
  if (record && isForgotten(record.meta, fence.epoch)) return endForgotten(record, fence, 'FAILED', input, now);
  if (!record || !fenceMatches(record.meta, fence)) return fenced(record);
  if (record.meta.status === 'FAILED') return { reply: { ok: true, meta: record.meta } };
  if (!isActive(record.meta.status)) return fenced(record);
  const { failure } = input;
  const meta: FlightMeta = {
    ...record.meta,
    status: 'FAILED',
    updatedAt: now,
    expireAt: now + input.ttlMs,
    retryable: failure.retryable,
    errorType: failure.type,
    errorCode: failure.code,
    errorMessage: failure.message,
  };
  return { reply: { ok: true, meta }, next: { meta }, event: terminalEvent(meta) };
}

/**
 * Cancel an active flight cluster-wide (no fence: an operator action). With `epoch`, only that run:
 * an active run of another epoch answers EPOCH_MISMATCH and is left alone.
 */
export function cancel(stored: FlightRecord | null, _ref: FlightRef, input: CancelInput, now: number): Transition<CancelReply> {
  const record = isLive(stored, now) ? stored : null;
  if (!record || !isActive(record.meta.status)) {
    return { reply: { ok: false, code: 'NOT_ACTIVE', status: record?.meta.status ?? null } };
  }
  if (input.epoch !== undefined && input.epoch !== record.meta.epoch) {
    return { reply: { ok: false, code: 'EPOCH_MISMATCH', status: record.meta.status } };
  }
  const meta: FlightMeta = {
    ...record.meta,
    status: 'CANCELLED',
    updatedAt: now,
    expireAt: now + input.ttlMs,
    retryable: false,
    errorType: 'CANCELLED',
    errorCode: 'E_FLIGHT_CANCELLED',
    errorMessage: input.reason,
  };
  return { reply: { ok: true, meta }, next: { meta }, event: terminalEvent(meta) };
}

/** Mark an active flight past its deadline EXPIRED. */
export function expire(stored: FlightRecord | null, _ref: FlightRef, input: { ttlMs: number }, now: number): Transition<ExpireReply> {
  const record = isLive(stored, now) ? stored : null;
  if (!record || !isActive(record.meta.status)) {
    return { reply: { ok: false, code: 'NOT_ACTIVE', status: record?.meta.status ?? null } };
  }
  if (now < record.meta.deadlineAt) return { reply: { ok: false, code: 'NOT_DUE', status: record.meta.status } };
  const meta: FlightMeta = { ...record.meta, status: 'EXPIRED', updatedAt: now, expireAt: now + input.ttlMs };
  return { reply: { ok: true, meta }, next: { meta }, event: terminalEvent(meta) };
}
