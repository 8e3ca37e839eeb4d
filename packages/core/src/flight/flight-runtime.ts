/**
 * What the runs of one `SingleFlight` share: its resolved options, events, deadlines, heartbeats, the
 * in-process single-flight, the guards per stage and the owner runs in progress, and the helpers every
 * mode uses (coordinator calls, the result codec, L1, the supplier run under guard and session lock).
 */
import { FlightCancelledError, FlightCoordinationError, FlightRunTimeoutError, toCoordinationError } from '../errors.js';
import { FlightEvents } from '../events/emitter.js';
import { toFailureRecord } from '../failure/classify.js';
import { createGuard, type Guard } from '../guard/guard.js';
import { HeartbeatManager } from '../heartbeat/heartbeat-manager.js';
import { flightId } from '../keys/key-builder.js';
import { NodeCopies } from '../cache/node-copies.js';
import { LocalSingleFlight } from '../local/local-single-flight.js';
import type { StoredResult } from '../ports/codec.js';
import type { ReplayEntry } from '../ports/replay-cache.js';
import type { StagePolicy } from '../policy/stage-policy.js';
import { deepFreeze, deepFreezeParsedJson } from '../results/deep-freeze.js';
import { DeadlineQueue } from '../run/deadline-queue.js';
import type { RunScope } from '../run/run-scope.js';
import type { FailureRecord, FailureType, FlightRef, StaleWindows } from '../state/types.js';
import type { FlightCall } from './flight-call.js';
import type { FlightMode, ResolvedOptions } from './options.js';
import { withSessionLock } from './session-lock-scope.js';
import { SupplierContext, type AttemptContext } from './supplier-context.js';
import type { ExecuteOptions } from './types.js';

/**
 * The failure record of a run: never retryable when the caller asked for at most one run, always when it
 * asked for its failures not to be kept (`keepFailures: false`).
 */
export function failureRecord(error: unknown, policy: StagePolicy, options: ExecuteOptions): FailureRecord {
  const failure = toFailureRecord(error, policy);
  if (options.atMostOnce === true) failure.retryable = false;
  else if (options.keepFailures === false) failure.retryable = true;
  return failure;
}

/** The in-process run id of callers that want a fresh value (they never join one that may take a stale one). */
export const freshRunId = (id: string): string => `${id}\u0000fresh`;

/** Whether the stage's guard may retry this call's supplier. */
const guardMayRetry = (options: ExecuteOptions) => options.atMostOnce !== true && options.keepFailures !== false;

/** `fn()` as a promise: a synchronous throw becomes its rejection. */
function started<T>(fn: () => Promise<T>): Promise<T> {
  try {
    // Promise.resolve returns a native promise as is; it only wraps a coordinator that answers otherwise.
    return Promise.resolve(fn());
  } catch (error) {
    return Promise.reject(error);
  }
}

export class FlightRuntime {
  readonly mode: FlightMode;
  readonly events: FlightEvents;
  readonly local: LocalSingleFlight;
  readonly heartbeats: HeartbeatManager;
  /** Deadlines of runs and waits, on one timer per distinct length instead of one per call. */
  readonly deadlines: DeadlineQueue;
  /** The owner runs in progress on this node, by flight id (`cancel` and `close` abort them). */
  readonly owners = new Map<string, RunScope>();
  /** Every copy of a value this node holds (L1, stale copies, a refresh's offer, stream logs), under one set of rules. */
  readonly copies: NodeCopies;
  /** Flights whose node stale copy a detached local refresh is refreshing now. */
  readonly localRefreshes = new Set<string>();
  /** Work going on after its callers were answered (`storeInBackground`); `close` waits for it. */
  readonly background = new Set<Promise<unknown>>();
  private readonly guards = new Map<string, Guard>();
  /** Hybrid mode: until when this node serves from the in-process single-flight. */
  private coordinatorDownUntil = 0;
  /** The coordinator stores bytes as they are: the codec may hand it a compressed body without base64. */
  private readonly storesBytes: boolean;

  constructor(readonly options: ResolvedOptions) {
    this.mode = options.mode;
    this.storesBytes = options.coordinator.storesBytes === true;
    this.events = new FlightEvents(options.logger);
    this.deadlines = new DeadlineQueue(options.clock, options.logger);
    this.heartbeats = new HeartbeatManager(options.clock, options.logger, this.deadlines);
    this.local = new LocalSingleFlight(this.deadlines);
    const { coordinator } = options;
    this.copies = new NodeCopies({
      cache: options.replayCache,
      clock: options.clock,
      listen: options.mode === 'local' ? undefined : coordinator.listenForgets?.bind(coordinator),
      heard: (id, ref) => {
        this.forgetHere(id);
        if (this.events.wants('forgotten')) this.events.emit('forgotten', { ...ref });
      },
    });
  }

  /** Tracks `work` that goes on after its callers were answered: logged with `message` should it reject, never thrown. */
  inBackground(work: Promise<unknown>, ref: FlightRef, message: string): void {
    const tracked: Promise<unknown> = work
      .catch((error: unknown) => this.options.logger.warn({ ...ref, err: error }, message))
      .finally(() => this.background.delete(tracked));
    this.background.add(tracked);
  }

  /** True while hybrid mode is serving from the local fallback. */
  get degraded(): boolean {
    return this.mode === 'hybrid' && this.options.clock.now() < this.coordinatorDownUntil;
  }

  /** Hybrid mode: the coordinator failed; the node serves from the in-process single-flight for a while. */
  coordinatorDown(): void {
    this.coordinatorDownUntil = this.options.clock.now() + this.options.fallbackCooldownMs;
  }

  /** Hybrid mode: the lease can no longer be renewed (coordinator unreachable); the node serves degraded. */
  degrade(ref: FlightRef, reason: string): void {
    this.coordinatorDown();
    this.options.logger.warn({ ...ref, reason }, "coordination failed during a run; finishing it for this node's callers only");
    this.events.emit('fallback', { ...ref, error: reason });
  }

  /** Milliseconds since `startedAt`, or undefined when the call never waited. */
  sinceMs(startedAt: number | undefined): number | undefined {
    return startedAt === undefined ? undefined : this.options.clock.now() - startedAt;
  }

  /** Emits `waited` for a call that waited (as a follower) and was woken by `woken`. */
  emitWaited(ref: FlightRef, startedAt: number | undefined, woken: 'event' | 'poll'): void {
    if (startedAt !== undefined && this.events.wants('waited')) {
      this.events.emit('waited', { ...ref, waitedMs: this.options.clock.now() - startedAt, woken });
    }
  }

  /**
   * Runs `fn` holding the session lock when the stage asks for it (heavy stages): only a run's owner takes
   * it, so identical requests follow the run instead of queueing. The lock is renewed while held.
   */
  private withSessionLock<T>(policy: StagePolicy, sessionId: string | undefined, run: RunScope, fn: () => Promise<T>) {
    if (!policy.sessionLock.enabled || !sessionId) return fn();
    const { sessionLock, localSessionLock, clock, logger } = this.options;
    const scope = { lock: sessionLock, fallback: this.mode === 'hybrid' ? localSessionLock : undefined, clock, logger };
    return withSessionLock(scope, sessionId, { ttlMs: policy.sessionLock.ttlMs, waitMs: policy.sessionLock.waitMs }, run, fn);
  }

  /**
   * Runs the supplier of one attempt under the stage's guard, inside `run`'s session lock, and settles as
   * soon as `run` is abandoned even if the supplier never does (its session lock and bulkhead slot are
   * released at once).
   */
  execRun(call: FlightCall, run: RunScope, context: AttemptContext): Promise<unknown> {
    const { ref, supplier, policy, options } = call;
    // An inline arrow, not a named one: a named closure per call also costs a `name` property under keep-names builds.
    return run.race(
      this.withSessionLock(policy, options.sessionId, run, () => {
        if (this.events.wants('run')) this.events.emit('run', { ...ref, role: context.role, attempt: context.attempt });
        const attempt = call.detachedRun
          ? this.unlessForgotten(call, run, (scope: RunScope) => supplier(new SupplierContext(scope, ref, context)))
          : (scope: RunScope) => supplier(new SupplierContext(scope, ref, context));
        return this.guard(policy).run(attempt, run, guardMayRetry(options));
      }),
    );
  }

  /**
   * The attempts of a run nobody waits for (a refresh detached from its callers): once its flight was
   * forgotten, its value can serve nobody, so no further attempt calls the supplier — the run is abandoned.
   */
  private unlessForgotten<T>(call: FlightCall, run: RunScope, attempt: (scope: RunScope) => T): (scope: RunScope) => T {
    const id = flightId(call.ref);
    let attempts = 0;
    return (scope) => {
      if (attempts++ > 0 && !this.copies.current(id, call.since)) {
        const error = new FlightCancelledError('the flight was forgotten during its refresh; not trying it again', {
          context: { ...call.ref },
        });
        run.abort(error);
        throw error;
      }
      return attempt(scope);
    };
  }

  private guard(policy: StagePolicy): Guard {
    let guard = this.guards.get(policy.stage);
    if (!guard) this.guards.set(policy.stage, (guard = createGuard(policy, this.deadlines)));
    return guard;
  }

  /** Abandons `run` with a typed timeout `delayMs` from now (a run that holds no lease still has a deadline). */
  limitRun(run: RunScope, ref: FlightRef, policy: StagePolicy, delayMs: number): void {
    run.limit(
      this.deadlines,
      Math.max(0, delayMs),
      () =>
        new FlightRunTimeoutError(`stage ${ref.stage}: the run passed maxRunMs (${policy.maxRunMs} ms) and was abandoned`, {
          context: { ...ref, maxRunMs: policy.maxRunMs },
        }),
    );
  }

  /** Calls the coordinator; any failure becomes a typed `FlightCoordinationError`. */
  call<T>(fn: () => Promise<T>, ref: FlightRef): Promise<T> {
    return started(fn).catch((error: unknown) => {
      throw toCoordinationError(error, { ...ref });
    });
  }

  /**
   * `call`, repeated once when the first attempt's outcome is unknown (no reply by the deadline: it may
   * have landed). Safe because every coordinator operation is idempotent for the same arguments (the same
   * owner token or fence): a landed acquire answers the same epoch again, a landed complete answers OK.
   */
  callIdempotent<T>(operation: string, fn: () => Promise<T>, ref: FlightRef): Promise<T> {
    // One derived promise for the mapping and the repeat (this runs for every acquire and owner write).
    return started(fn).then(undefined, (error: unknown) => {
      const mapped = toCoordinationError(error, { ...ref });
      if (!(mapped instanceof FlightCoordinationError) || !mapped.outcomeUnknown) throw mapped;
      this.options.logger.warn({ ...ref, operation, err: mapped }, 'no reply by the deadline; repeating the idempotent call once');
      return this.call(fn, ref);
    });
  }

  /**
   * Keeps the deep-frozen value `call` got (and its run's epoch) on this node: in L1 when the stage has it,
   * and as the node's stale copy when the call keeps stale copies outside `distributed` mode (what local
   * mode and hybrid's fallback serve stale) — all through `NodeCopies`, which refuses a fill of a call that
   * started before a forget of its flight. `sizeBytes` is what the value holds in memory. `storedForMs` is
   * how long the stored result it copies still lives (what the run stored it for, for a result just
   * stored); the L1 entry never outlives it, nor how long the call's options let the value be reused
   * (`FlightCall.reuseFor`). `ownRun`: the value comes from this call's own run, with the freshness and
   * windows the run stored it with (each read from the call's options when not given).
   */
  remember(
    call: FlightCall,
    entry: ReplayEntry,
    sizeBytes: number,
    storedForMs: number = call.policy.resultTtlMs,
    ownRun?: { freshMs?: number; windows?: StaleWindows | undefined },
  ): void {
    const { policy } = call;
    const keepsStale = ownRun !== undefined && call.keepsStale && this.mode !== 'distributed';
    if (!policy.l1.enabled && !keepsStale) return;
    const reuseMs = call.reuseFor(entry.value);
    const l1TtlMs = policy.l1.enabled ? Math.min(policy.l1.ttlMs, storedForMs, reuseMs) : 0;
    const windows = keepsStale ? (ownRun.windows ?? call.staleWindows(entry.value)) : undefined;
    const stale = windows && { freshMs: ownRun?.freshMs ?? reuseMs, windows };
    this.copies.fill(flightId(call.ref), call, { entry, sizeBytes, l1TtlMs, stale }, entry.epoch === undefined);
  }

  /** Forgets the flight on this node: every copy of it, its in-process runs, and any fill of a call started before now. */
  forgetHere(id: string): void {
    this.copies.forget(id);
    this.local.forget(id);
    this.local.forget(freshRunId(id));
  }

  /** Reports that a refresh of a stale value of `ref` failed (the `refresh-failed` event). */
  refreshFailed(ref: FlightRef, epoch: number, failure: { type: FailureType; code: string; message: string }): void {
    this.events.emit('refresh-failed', { ...ref, epoch, errorType: failure.type, errorCode: failure.code, message: failure.message });
  }

  /**
   * Decodes a stored or carried payload into the deep-frozen value callers share, with what it holds in
   * memory (for L1's byte bound).
   */
  decode(payload: StoredResult, maxBytes: number): { value: unknown; bytes: number } {
    const value = this.options.codec.decode(payload, { maxBytes });
    return { value, bytes: this.freezeDecoded(value, payload) };
  }

  /**
   * Deep-freezes a value the codec decoded from `payload` (faster when it is known to be fresh from
   * `JSON.parse`) and returns what it holds in memory: the larger of the payload's length and the value's
   * estimated size (L1's byte bound).
   */
  freezeDecoded(value: unknown, payload: StoredResult): number {
    return Math.max(payload.length, this.options.decodesFreshJson ? deepFreezeParsedJson(value) : deepFreeze(value));
  }

  /** Encodes then decodes, so every role returns the same shape of value and the size cap holds everywhere. */
  roundTrip(value: unknown, maxBytes: number): { payload: StoredResult; value: unknown } {
    const { codec } = this.options;
    const limits = { maxBytes, bytes: this.storesBytes };
    if (codec.encodeWithCopy) return codec.encodeWithCopy(value, limits);
    const payload = codec.encode(value, limits);
    return { payload, value: codec.decode(payload, limits) };
  }
}
