/**
 * The distributed flow of one call: acquire, then by the reply replay the stored outcome, follow the
 * owner (`follower-wait.ts`) or run as the owner (`owner-run.ts`), and ask again until an outcome.
 */
import { randomUUID } from 'node:crypto';
import { FlightCancelledError, FlightCoordinationError, FlightExecutionError } from '../errors.js';
import type { FlightRole } from '../events/types.js';
import { toExecutionError } from '../failure/classify.js';
import { failureOf } from '../failure/stored-failure.js';
import { leaseTerms } from '../policy/stage-policy.js';
import { sleep } from '../ports/clock.js';
import type { AcquireInput, AcquireReply, FlightMeta } from '../state/types.js';
import { noteWork, type FlightCall, type Outcome } from './flight-call.js';
import type { FlightRuntime } from './flight-runtime.js';
import { followerWait } from './follower-wait.js';
import { runLocal } from './node-stale.js';
import { takeOwnership } from './owner-run.js';
import { holdOffer, refreshDetached, refreshHere, staleOutcome } from './stale-values.js';

export async function runDistributed(runtime: FlightRuntime, call: FlightCall): Promise<Outcome> {
  const { ref, policy, options, note } = call;
  const lease = leaseTerms(policy);
  for (;;) {
    // An owner that takes its session lock first starts PENDING; every other owner runs at once.
    const { sessionId } = options;
    const startRunning = !(policy.sessionLock.enabled && sessionId);
    const input: AcquireInput = {
      stage: ref.stage,
      key: ref.key,
      takeoverAfterMs: lease.takeoverAfterMs,
      leaseTtlMs: lease.leaseTtlMs,
      maxRunMs: lease.maxRunMs,
      sessionId,
      ownerId: runtime.options.nodeId,
      ownerToken: randomUUID(),
      joinEpoch: call.joinEpoch,
      startRunning,
      traceparent: note?.traceparent,
      minRecordTtlMs: Math.min(lease.leaseTtlMs, policy.resultTtlMs, policy.failureTtlMs, policy.terminalTtlMs),
    };
    if (call.acceptsStale) input.acceptStale = true;
    // A failure that concerns its run only reaches the callers that followed that run (keepFailures: false).
    if (options.keepFailures === false && call.joinEpoch !== undefined) input.joinFailures = true;
    const reply = await acquireRound(runtime, call, input);
    holdOffer(runtime, call, reply);
    let outcome: Outcome | undefined;
    switch (reply.outcome) {
      case 'REPLAY_SUCCESS':
        return await replaySuccess(runtime, call, reply);
      case 'REPLAY_FAILURE':
        return (reply.meta.status === 'FAILED' && staleOutcome(runtime, call, 'error')) || replayFailure(runtime, call, reply.meta);
      case 'FOLLOWER_WAIT':
        outcome = staleOutcome(runtime, call, 'revalidating') ?? (await followerWait(runtime, call, reply));
        break;
      case 'OWNER_NEW':
      case 'OWNER_TAKEOVER':
        outcome = await ownOrRefresh(runtime, call, reply);
        break;
    }
    if (outcome) return outcome;
  }
}

/**
 * The acquire of one round. A call that already follows a run rides out a coordinator that stops answering
 * (a failover, a restart, a dropped connection) by asking again every `pollIntervalMs` until its wait runs
 * out, as it would have waited for the owner: the run it follows goes on meanwhile. A first acquire fails at
 * once, and so does a hybrid call that may fall back to its node's in-process single-flight.
 */
function acquireRound(runtime: FlightRuntime, call: FlightCall, input: AcquireInput): Promise<AcquireReply> {
  const acquire = () => {
    call.acquireSentAt = runtime.options.clock.now();
    return runtime.callIdempotent('acquire', () => runtime.options.coordinator.acquire(input), call.ref);
  };
  const ridesOut = call.joinEpoch !== undefined && (runtime.mode === 'distributed' || call.options.localFallback === false);
  // The first acquire of a call (the common path) is the coordinator's promise itself.
  return ridesOut ? acquire().catch((error: unknown) => rideOut(runtime, call, acquire, error)) : acquire();
}

/** Calls `acquire` again every `pollIntervalMs` while the coordinator fails, until the call's wait runs out. */
async function rideOut(
  runtime: FlightRuntime,
  call: FlightCall,
  acquire: () => Promise<AcquireReply>,
  first: unknown,
): Promise<AcquireReply> {
  const { ref, policy } = call;
  const { clock, logger } = runtime.options;
  let error = first;
  for (let round = 0; ; round++) {
    const remaining = policy.waitTimeoutMs - (clock.now() - (call.waitStartedAt ?? clock.now()));
    if (!(error instanceof FlightCoordinationError) || remaining <= 0 || call.options.signal?.aborted) throw error;
    if (round === 0)
      logger.warn({ ...ref, err: error }, 'the coordinator failed while this call follows a run; asking again within its wait');
    await sleep(clock, Math.min(policy.pollIntervalMs, remaining), call.options.signal);
    try {
      return await acquire();
    } catch (next) {
      error = next;
    }
  }
}

/**
 * The lease is this call's: with a stale value it may serve at once, the run becomes a refresh detached from
 * it (unless the call runs its refresh itself: `staleRefresh: 'caller'`); else it runs for the call, and a
 * failure is answered with a stale value still in its error window.
 */
async function ownOrRefresh(runtime: FlightRuntime, call: FlightCall, reply: AcquireReply): Promise<Outcome | undefined> {
  if (!call.offer) return takeOwnership(runtime, call, reply);
  const stale = call.options.staleRefresh === 'caller' ? undefined : staleOutcome(runtime, call, 'revalidating');
  if (stale) {
    refreshDetached(runtime, call, reply);
    return stale;
  }
  call.refreshing = call.offer.offer.errorForMs > 0;
  try {
    return await refreshHere(runtime, call, () => takeOwnership(runtime, call, reply));
  } catch (error) {
    const fallback = staleOutcome(runtime, call, 'error');
    if (fallback && isRunFailure(error)) return fallback;
    throw error;
  }
}

/** A failure of the run itself (a supplier error, timeout or lost lease), not the caller leaving or bad input. */
function isRunFailure(error: unknown): boolean {
  return error instanceof FlightExecutionError;
}

/** A stored value (or the value of the run this call followed): decoded, verified and shared. */
async function replaySuccess(runtime: FlightRuntime, call: FlightCall, reply: AcquireReply): Promise<Outcome> {
  const { ref, policy, note } = call;
  const { meta } = reply;
  let decoded: { value: unknown; bytes: number };
  const payload = reply.result ?? '';
  try {
    decoded = runtime.decode(payload, call.maxResultBytes);
  } catch (error) {
    const action = policy.onCorruptResult;
    runtime.events.emit('corrupt', { ...ref, error: (error as Error).message, action });
    runtime.options.logger.error({ ...ref, err: error, action }, 'stored result failed verification');
    if (action === 'error') throw error;
    return await runLocal(runtime, call);
  }
  const { value } = decoded;
  // The L1 copy lives no longer than the stored result it copies.
  runtime.remember(call, { value, epoch: meta.epoch }, decoded.bytes, reply.storedForMs ?? meta.expireAt - runtime.options.clock.now());
  const role: FlightRole = call.joinEpoch === undefined ? 'replay' : 'follower';
  if (role === 'replay' && runtime.events.wants('replay')) runtime.events.emit('replay', { ...ref, outcome: 'success' });
  runtime.emitWaited(ref, call.waitStartedAt, call.woken);
  noteWork(note, role, meta.epoch, meta.traceparent, runtime.sinceMs(call.waitStartedAt));
  return { value, role, epoch: meta.epoch, trace: note };
}

/** A stored failure (or the failure of the run this call followed), thrown as its typed error. */
function replayFailure(runtime: FlightRuntime, call: FlightCall, meta: FlightMeta): never {
  const { ref, note } = call;
  runtime.emitWaited(ref, call.waitStartedAt, call.woken);
  noteWork(note, call.joinEpoch === undefined ? 'replay' : 'follower', meta.epoch, meta.traceparent, runtime.sinceMs(call.waitStartedAt));
  if (meta.status === 'CANCELLED') {
    throw new FlightCancelledError(`flight cancelled: ${meta.errorMessage}`, { context: { ...ref, epoch: meta.epoch } });
  }
  if (call.joinEpoch === undefined) runtime.events.emit('replay', { ...ref, outcome: 'failure' });
  throw toExecutionError(failureOf(meta), { ...ref, replayed: true });
}
