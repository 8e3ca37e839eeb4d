/**
 * The owner path of a distributed call: it was given the lease (a new run or a takeover), so it marks the
 * flight RUNNING, renews the lease while the supplier runs under guard and session lock, encodes the value
 * and completes the flight (or records its failure). A write refused by a newer owner is "fenced": the
 * call then follows whoever holds the flight now.
 */
import { setImmediate as nextMacrotask } from 'node:timers/promises';
import { FlightCancelledError, FlightFencedError, FlightLeaseLostError, FlightRunTimeoutError } from '../errors.js';
import type { LeaseLossReason } from '../events/types.js';
import { toExecutionError } from '../failure/classify.js';
import { flightId } from '../keys/key-builder.js';
import { leaseTerms, type StagePolicy } from '../policy/stage-policy.js';
import { RunScope } from '../run/run-scope.js';
import type { AcquireReply, FailureRecord, Fence, LeaseTerms, StoredResult } from '../state/types.js';
import { noteWork, type FlightCall, type Outcome } from './flight-call.js';
import { failureRecord, type FlightRuntime } from './flight-runtime.js';

type OwnerResult = { kind: 'value'; value: unknown } | { kind: 'fenced'; error: Error };

/**
 * Handles an `OWNER_NEW` or `OWNER_TAKEOVER` reply: runs the flight, or gives the lease back when the call
 * used up its ownership attempts. Resolves the outcome, or undefined when the run was fenced and the call
 * asks again.
 */
export async function takeOwnership(runtime: FlightRuntime, call: FlightCall, reply: AcquireReply): Promise<Outcome | undefined> {
  const { meta } = reply;
  const { policy, options, note } = call;
  // A call that must not run twice never takes over after its own run was fenced.
  if (call.ownerAttempts >= (options.atMostOnce ? 1 : policy.maxAttempts)) {
    // This call holds the lease it was just given: hand it on at once instead of leaving it PENDING
    // until `takeoverAfterMs`.
    await releaseLease(runtime, reply, policy, call.ownerAttempts);
    throw call.lastError ?? new FlightFencedError('too many ownership attempts', { context: call.ref });
  }
  call.ownerAttempts++;
  noteWork(note, 'owner', meta.epoch, note?.traceparent, runtime.sinceMs(call.waitStartedAt));
  const takeover = reply.outcome === 'OWNER_TAKEOVER';
  if (takeover) {
    runtime.events.emit('takeover', { ...call.ref, epoch: meta.epoch, previousEpoch: call.joinEpoch ?? 0, previousStatus: 'taken-over' });
  }
  const result = await ownerRun(runtime, call, reply, takeover);
  if (result.kind === 'value') return { value: result.value, role: 'owner', epoch: meta.epoch, trace: note };
  call.lastError = result.error;
  call.joinEpoch = meta.epoch;
  return undefined;
}

/** Gives up a lease this call holds but will not run: FAILED and retryable, so the next caller takes over. */
async function releaseLease(runtime: FlightRuntime, reply: AcquireReply, policy: StagePolicy, attempts: number): Promise<void> {
  const { meta } = reply;
  const ref = { stage: meta.stage, key: meta.requestKey };
  const fence = fenceOf(reply);
  const failure: FailureRecord = {
    type: 'OVERLOAD',
    code: FlightFencedError.code,
    message: `owner gave up after ${attempts} attempts; released for the next caller`,
    retryable: true,
  };
  try {
    await runtime.callIdempotent('fail', () => runtime.options.coordinator.fail(fence, { failure, ttlMs: policy.failureTtlMs }), ref);
  } catch (error) {
    runtime.options.logger.warn({ ...ref, err: error }, 'could not release the lease; it lapses after takeoverAfterMs');
    runtime.events.emit('coordination-error', { ...ref, error: (error as Error).message });
  }
}

/** The fence of the run `reply` gave this call, with the reply's handle for the coordinator. */
function fenceOf({ meta, handle }: AcquireReply): Fence {
  return { stage: meta.stage, key: meta.requestKey, ownerId: meta.ownerId, ownerToken: meta.ownerToken, epoch: meta.epoch, handle };
}

/** How many times an owner confirms its lease while each confirmation's reply comes back late. */
const LEASE_CONFIRMATIONS = 3;

/**
 * Whether the lease a request sent at `sentAt` gave or renewed may have lapsed by now: more than a heartbeat
 * interval went by before this node read its reply (its process stalled, or the reply was held up), and
 * the interval is what keeps an owner's renewals within `takeoverAfterMs`.
 */
function leaseInDoubt(runtime: FlightRuntime, call: FlightCall, sentAt: number | undefined): boolean {
  return sentAt !== undefined && runtime.options.clock.now() - sentAt > call.policy.heartbeatIntervalMs;
}

/**
 * Moves the run to RUNNING and renews its lease (`markRunning`) before the supplier runs: the run's record
 * may be PENDING, or the lease in doubt (`leaseInDoubt`). A confirmation whose reply comes back late is
 * itself in doubt and is sent again, up to `LEASE_CONFIRMATIONS` times. False when the lease is another
 * run's by now: the supplier must not run (another owner may be running it already).
 */
async function confirmLease(runtime: FlightRuntime, call: FlightCall, fence: Fence, lease: LeaseTerms): Promise<boolean> {
  const ref = { stage: fence.stage, key: fence.key };
  const { coordinator, clock } = runtime.options;
  for (let confirmation = 1; ; confirmation++) {
    const sentAt = clock.now();
    const running = await runtime.callIdempotent('markRunning', () => coordinator.markRunning(fence, lease), ref);
    if (!running.ok) return false;
    if (confirmation === LEASE_CONFIRMATIONS || !leaseInDoubt(runtime, call, sentAt)) return true;
  }
}

/** An owner write refused because a newer owner holds the flight. */
function fencedResult(runtime: FlightRuntime, ref: { stage: string; key: string }, epoch: number, operation: string): OwnerResult {
  runtime.events.emit('fenced', { ...ref, epoch, operation });
  runtime.options.logger.warn({ ...ref, epoch, operation }, 'owner write fenced: a newer owner holds the flight');
  return {
    kind: 'fenced',
    error: new FlightFencedError(`${operation} refused: epoch ${epoch} no longer owns the flight`, { context: ref }),
  };
}

// The callbacks an owner run hands out are methods, not arrows assigned to names: keep-names builds (tsx)
// would give each arrow a `name` property on every run.
async function ownerRun(runtime: FlightRuntime, call: FlightCall, reply: AcquireReply, takeover: boolean): Promise<OwnerResult> {
  const { meta } = reply;
  const { policy, options } = call;
  const { coordinator, logger, clock } = runtime.options;
  const { events, heartbeats } = runtime;
  const ref = { stage: meta.stage, key: meta.requestKey };
  const fence = fenceOf(reply);
  const lease = leaseTerms(policy);
  if (events.wants('owner')) events.emit('owner', { ...ref, epoch: meta.epoch, takeover });
  // When the lease was last given or renewed: the coordinator says so, or it dates from the acquire core sent.
  const leaseSentAt = reply.leaseSentAgoMs === undefined ? call.acquireSentAt : clock.now() - reply.leaseSentAgoMs;
  if (meta.status !== 'RUNNING' || leaseInDoubt(runtime, call, leaseSentAt)) {
    if (!(await confirmLease(runtime, call, fence, lease))) return fencedResult(runtime, ref, meta.epoch, 'markRunning');
  }

  const id = flightId(ref);
  const run = new RunScope();
  const startedAt = clock.now();
  let lostReason: LeaseLossReason | undefined;
  /** Hybrid mode only: renewals failed (coordinator unreachable), the run goes on for this node's callers. */
  let degraded = false;
  /** The run was forgotten cluster-wide: it finishes for this node's callers, its outcome is not stored or remembered. */
  let forgotten = false;
  runtime.owners.set(id, run);
  const task = heartbeats.start({
    requestKey: `${ref.stage}|${ref.key}`,
    ownerToken: meta.ownerToken,
    logFields() {
      return { ...ref, epoch: meta.epoch };
    },
    intervalMs: policy.heartbeatIntervalMs,
    takeoverAfterMs: policy.takeoverAfterMs,
    maxRunMs: policy.maxRunMs,
    stallTimeoutMs: policy.stallTimeoutMs,
    async renew() {
      const reply = await coordinator.heartbeat(fence, lease);
      if (reply.ok) return 'ok';
      if (reply.code === 'FORGOTTEN') return 'forgotten';
      return reply.status === 'EXPIRED' ? 'expired' : reply.status === 'CANCELLED' ? 'cancelled' : 'fenced';
    },
    onLost(reason) {
      if (reason === 'forgotten') {
        // Forgotten cluster-wide: no lease to keep, but this node's callers still get the run's value.
        forgotten = true;
        // Callers arriving on this node from now on start a new run instead of joining this one in-process,
        // and no copy of the flight taken before now is handed out here.
        runtime.forgetHere(id);
        logger.info({ ...ref, epoch: meta.epoch }, "run forgotten cluster-wide; finishing it for this node's callers only");
        runtime.limitRun(run, ref, policy, policy.maxRunMs - (clock.now() - startedAt));
        return;
      }
      if (reason === 'renewal-failed' && runtime.mode === 'hybrid') {
        // Nobody can take the flight over through an unreachable coordinator either: keep the run for
        // this node's callers, still bounded by maxRunMs, instead of failing them.
        degraded = true;
        runtime.degrade(ref, 'lease renewals failed; the run goes on for this node only');
        runtime.limitRun(run, ref, policy, policy.maxRunMs - (clock.now() - startedAt));
        return;
      }
      lostReason = reason;
      const error =
        reason === 'cancelled'
          ? new FlightCancelledError('flight cancelled', { context: ref })
          : new FlightLeaseLostError(`owner lost its lease (${reason})`, { context: { ...ref, epoch: meta.epoch, reason } });
      events.emit('lease-lost', { ...ref, epoch: meta.epoch, reason });
      logger.warn({ ...ref, epoch: meta.epoch, reason }, 'owner lease lost; aborting the run');
      run.abort(error);
      if (reason === 'max-run-time') {
        coordinator.expire(ref, { ttlMs: policy.terminalTtlMs }).catch((err) => logger.warn({ ...ref, err }, 'expire failed'));
      }
    },
  });
  try {
    let payload: StoredResult;
    let value: unknown;
    let bytes: number;
    try {
      // Raced with the lease: once it is lost the run stops counting, even if the supplier ignores its signal.
      const raw = await runtime.execRun(call, run, {
        role: 'owner',
        epoch: meta.epoch,
        run: meta.epoch,
        attempt: call.ownerAttempts,
        takeover,
        progress() {
          task.progress();
        },
        fence,
      });
      ({ payload, value } = runtime.roundTrip(raw, call.maxResultBytes));
      bytes = runtime.freezeDecoded(value, payload);
    } catch (error) {
      // No renewal may race the write below (a late renewal refused after it is not a lost lease).
      heartbeats.stop(task.taskKey);
      const lost = run.aborted && !(run.reason instanceof FlightRunTimeoutError) ? (run.reason as Error) : undefined;
      if (lost instanceof FlightCancelledError) return { kind: 'fenced', error: lost };
      const failure: FailureRecord = lost
        ? { type: 'TIMEOUT', code: FlightLeaseLostError.code, message: lost.message, retryable: options.atMostOnce !== true }
        : failureRecord(error, policy, options);
      const kept = keptFailure(runtime, call, failure, meta.epoch, lost ? undefined : error);
      let written;
      try {
        written = await runtime.callIdempotent('fail', () => coordinator.fail(fence, kept), ref);
      } catch (writeError) {
        logger.warn({ ...ref, err: writeError }, 'could not record the failure');
        events.emit('coordination-error', { ...ref, error: (writeError as Error).message });
      }
      // Follow whoever holds the flight now, unless this run itself timed out (max run time, stall,
      // failed renewals, server-side expiry): then its callers get the typed TIMEOUT at once.
      const refused = written && !written.ok && written.code !== 'FORGOTTEN' && !forgotten;
      if (refused && !degraded && (!lost || lostReason === 'fenced')) return fencedResult(runtime, ref, meta.epoch, 'fail');
      throw toExecutionError(failure, { ...ref, replayed: false, cause: error });
    }
    heartbeats.stop(task.taskKey);
    const encoded = { payload, value, bytes };
    if (!options.storeInBackground) return await completeRun(runtime, call, fence, encoded, { degraded, forgotten });
    // Stored once the callers have resumed (a later macrotask), so writing it is not on their path either.
    const stored = nextMacrotask().then(() => completeRun(runtime, call, fence, encoded, { degraded, forgotten }));
    runtime.inBackground(stored, ref, 'could not store the result in the background');
    return { kind: 'value', value };
  } finally {
    heartbeats.stop(task.taskKey);
    run.end(runtime.deadlines);
    if (runtime.owners.get(id) === run) runtime.owners.delete(id);
  }
}

/**
 * How a run's failure is kept: for `failureTtlMs` by its own retryability — unless the run refreshes a stale
 * value that may stand in for it (`FlightCall.refreshing`): then it is kept not retryable for the stage's
 * `stale.retryAfterMs`, so callers get the stale value meanwhile and the cluster tries one refresh per
 * interval; or unless the call's `holdFailure` holds the supplier's `error` (not retryable, that long). A
 * refresh's failure is reported (`refresh-failed`).
 */
function keptFailure(runtime: FlightRuntime, call: FlightCall, failure: FailureRecord, epoch: number, error: unknown) {
  const { policy, options } = call;
  if (call.offer && runtime.events.wants('refresh-failed')) runtime.refreshFailed(call.ref, epoch, failure);
  if (call.refreshing) return { failure: { ...failure, retryable: false }, ttlMs: policy.stale.retryAfterMs };
  const held = error === undefined ? undefined : heldFor(options.holdFailure, error);
  if (held !== undefined) return { failure: { ...failure, retryable: false }, ttlMs: held };
  return { failure, ttlMs: policy.failureTtlMs };
}

/** What `holdFailure` says of `error`: whole ms above 0, else undefined (a hook that throws holds nothing). */
function heldFor(hold: ((error: unknown) => number | undefined) | undefined, error: unknown): number | undefined {
  if (!hold) return undefined;
  let ms: number | undefined;
  try {
    ms = hold(error);
  } catch {
    return undefined;
  }
  return typeof ms === 'number' && ms >= 1 && Number.isFinite(ms) ? Math.floor(ms) : undefined;
}

/**
 * Stores the run's value (`complete`) and remembers it in L1. A refused write follows the newer owner,
 * unless the run is degraded (hybrid, coordinator unreachable) or forgotten: its callers still get the
 * value, which is then never stored or remembered for later callers.
 */
async function completeRun(
  runtime: FlightRuntime,
  call: FlightCall,
  fence: Fence,
  encoded: { payload: StoredResult; value: unknown; bytes: number },
  state: { degraded: boolean; forgotten: boolean },
): Promise<OwnerResult> {
  const { coordinator, logger } = runtime.options;
  const { events } = runtime;
  const { payload, value, bytes } = encoded;
  const ref = { stage: fence.stage, key: fence.key };
  const { degraded } = state;
  let { forgotten } = state;
  const resultTtlMs = call.reuseFor(value);
  const stale = call.staleWindows(value);
  const input = stale ? { result: payload, resultTtlMs, stale } : { result: payload, resultTtlMs };
  try {
    const written = await runtime.callIdempotent('complete', () => coordinator.complete(fence, input), ref);
    if (!written.ok && written.code === 'FORGOTTEN') forgotten = true;
    if (!written.ok && !degraded && !forgotten) return fencedResult(runtime, ref, fence.epoch, 'complete');
    if (written.ok) {
      if (events.wants('completed')) events.emit('completed', { ...ref, epoch: fence.epoch, followers: written.meta.followers });
    } else if (!forgotten)
      logger.warn({ ...ref, epoch: fence.epoch }, 'result refused after the lease lapsed; returning it to local callers only');
  } catch (error) {
    // The value is right; only sharing it failed. This node's callers still get it.
    logger.warn({ ...ref, err: error }, 'could not store the result; returning it to local callers only');
    events.emit('coordination-error', { ...ref, error: (error as Error).message });
  }
  // A forgotten run's value goes to the callers it already has, never to later ones.
  if (!forgotten) {
    runtime.remember(call, { value, epoch: fence.epoch }, bytes, resultTtlMs, { freshMs: resultTtlMs, windows: stale });
  }
  return { kind: 'value', value };
}
