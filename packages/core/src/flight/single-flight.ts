/**
 * Distributed single-flight: each logical call runs once across the cluster, its callers share the outcome.
 *
 * `execute(stage, key, supplier)`: L1 → in-process coalescing → session lock (heavy stages) →
 * acquire → owner path (markRunning, heartbeat, guard, codec, complete) or follower path (wait for
 * the terminal event, polling as a safety net, replay, take over a dead owner) or replay paths.
 * Modes `distributed`, `local` and `hybrid` (coordination failure → in-process single-flight).
 */
import { randomUUID } from 'node:crypto';
import {
  FlightAbortedError,
  FlightCancelledError,
  FlightCoordinationError,
  FlightFencedError,
  FlightLeaseLostError,
  FlightRunTimeoutError,
  FlightValidationError,
  FlightWaitTimeoutError,
  isCoordinationFailure,
  toCoordinationError,
} from '../errors.js';
import { FlightEvents } from '../events/emitter.js';
import type { FlightEventMap, FlightEventName, FlightRole, LeaseLossReason } from '../events/types.js';
import { toExecutionError, toFailureRecord } from '../failure/classify.js';
import { failureOf } from '../failure/stored-failure.js';
import { createGuard, type Guard } from '../guard/guard.js';
import { HeartbeatManager } from '../heartbeat/heartbeat-manager.js';
import { assertRequestKey, flightId } from '../keys/key-builder.js';
import { LocalSingleFlight } from '../local/local-single-flight.js';
import { assertStageName, leaseTerms, resolveStagePolicy, type StagePolicy } from '../policy/stage-policy.js';
import { deepFreeze, deepFreezeParsedJson } from '../results/deep-freeze.js';
import { DeadlineQueue } from '../run/deadline-queue.js';
import { RunScope } from '../run/run-scope.js';
import type { AcquireInput, FailureRecord, Fence, FlightMeta, FlightRef } from '../state/types.js';
import { FlightTelemetry, type TraceNote } from '../telemetry/flight-telemetry.js';
import { withSessionLock } from './session-lock-scope.js';
import { SupplierContext } from './supplier-context.js';
import type { ExecuteOptions, FlightResult, StreamExecuteOptions, Supplier } from './types.js';
import { resolveOptions, type FlightMode, type ResolvedOptions, type SingleFlightOptions } from './options.js';
import { StreamFlights } from '../stream/stream-flights.js';
import type { ChunkSupplier } from '../stream/streamed-supplier.js';
import type { FlightStreamRestart } from '../stream/restart.js';
import type { ExecuteStreamOptions, FlightStream, StreamChunk } from '../stream/types.js';

interface Outcome {
  value: unknown;
  role: FlightRole;
  epoch?: number | undefined;
  /** The run's trace note (telemetry on), read by the callers that joined the run on this node. */
  trace?: TraceNote | undefined;
}

type OwnerResult = { kind: 'value'; value: unknown } | { kind: 'fenced'; error: Error };

/** Records in the trace note who did the work for this call (no-op with telemetry off). */
function noteWork(note: TraceNote | undefined, role: FlightRole, epoch: number | undefined, ownerTraceparent: string | undefined, waitedMs?: number) {
  if (!note) return;
  note.role = role;
  note.epoch = epoch;
  note.ownerTraceparent = ownerTraceparent;
  note.waitedMs = waitedMs;
}

/**
 * The failure record of a run: never retryable when the caller asked for at most one run, always when it
 * asked for its failures not to be kept (`keepFailures: false`).
 */
function failureRecord(error: unknown, policy: StagePolicy, options: ExecuteOptions): FailureRecord {
  const failure = toFailureRecord(error, policy);
  if (options.atMostOnce === true) failure.retryable = false;
  else if (options.keepFailures === false) failure.retryable = true;
  return failure;
}

/** Whether the stage's guard may retry this call's supplier. */
const guardMayRetry = (options: ExecuteOptions) => options.atMostOnce !== true && options.keepFailures !== false;

export class SingleFlight {
  readonly nodeId: string;
  readonly mode: FlightMode;
  private readonly options: ResolvedOptions;
  private readonly events: FlightEvents;
  private readonly local: LocalSingleFlight;
  private readonly heartbeats: HeartbeatManager;
  /** Deadlines of runs and waits, on one timer per distinct length instead of one per call. */
  private readonly deadlines: DeadlineQueue;
  private readonly policies = new Map<string, StagePolicy>();
  private readonly guards = new Map<string, Guard>();
  private readonly owners = new Map<string, RunScope>();
  /** Spans and counters through `@opentelemetry/api`; undefined when it is off or not installed. */
  private readonly telemetry: FlightTelemetry | undefined;
  private coordinatorDownUntil = 0;
  private streams: StreamFlights | undefined;

  constructor(options: SingleFlightOptions = {}) {
    this.options = resolveOptions(options);
    this.nodeId = this.options.nodeId;
    this.mode = this.options.mode;
    this.events = new FlightEvents(this.options.logger);
    this.deadlines = new DeadlineQueue(this.options.clock, this.options.logger);
    this.heartbeats = new HeartbeatManager(this.options.clock, this.options.logger, this.deadlines);
    this.local = new LocalSingleFlight(this.deadlines);
    this.telemetry = FlightTelemetry.create(this.options.telemetry, this.options.logger);
    for (const stage of Object.keys(this.options.stages)) this.policy(stage);
  }

  /** Subscribes to lifecycle events; returns the unsubscribe function. */
  on<E extends FlightEventName>(event: E, listener: (payload: FlightEventMap[E]) => void): () => void {
    return this.events.on(event, listener);
  }

  /** The resolved policy of a stage. */
  policy(stage: string): StagePolicy {
    let policy = this.policies.get(stage);
    if (!policy) {
      policy = resolveStagePolicy(stage, this.options.defaults, this.options.stages[stage]);
      this.policies.set(stage, policy);
    }
    return policy;
  }

  /** True while hybrid mode is serving from the local fallback. */
  get degraded(): boolean {
    return this.mode === 'hybrid' && this.options.clock.now() < this.coordinatorDownUntil;
  }

  /**
   * Runs `supplier` once across the cluster for (stage, key) and returns the value with its role. The value
   * is deep-frozen and shared by every caller of the run (see `results/deep-freeze.ts`).
   */
  async execute<T>(stage: string, key: string, supplier: Supplier<T>, options: ExecuteOptions = {}): Promise<FlightResult<T>> {
    const { telemetry } = this;
    const span = telemetry?.start(stage);
    // This call's trace note; a call that joins another on this node reads the leader's note instead.
    const note: TraceNote | undefined = telemetry ? { traceparent: span?.traceparent } : undefined;
    let runNote = note;
    const timed = span !== undefined || this.events.wants('settled');
    const startedAt = timed ? this.options.clock.now() : 0;
    let role: FlightRole | 'none' = 'none';
    let shared = false;
    let joined = false;
    let failure: unknown;
    try {
      assertStageName(stage);
      assertRequestKey(key, stage);
      if (typeof supplier !== 'function') throw new FlightValidationError('supplier must be a function', { context: { stage, key } });
      const { signal } = options;
      if (signal?.aborted) throw new FlightAbortedError('the caller aborted before the call', { cause: signal.reason, context: { stage, key } });
      const policy = this.policy(stage);
      const id = flightId({ stage, key });
      if (policy.l1.enabled) {
        const hit = this.options.replayCache.get(id);
        if (hit) {
          role = 'l1';
          shared = true;
          if (this.events.wants('l1')) this.events.emit('l1', { stage, key });
          return { value: hit.value as T, role, shared, stage, key };
        }
      }
      const run =
        this.mode === 'local'
          ? () => this.runLocal(stage, key, supplier, policy, options, note)
          : () => this.runFlight(stage, key, supplier, policy, options, note);
      const result = await this.local.do(id, span ? () => span.activate(run) : run, {
        signal,
        // A streamed call joined here waits as long as the call it joined (which is bounded by progress).
        waitTimeoutMs: (options as StreamExecuteOptions).progressedAt ? undefined : policy.waitTimeoutMs,
      });
      joined = !result.leader;
      if (joined) runNote = result.value.trace;
      // Callers that joined another caller's run on this node followed it; they did not run the supplier.
      role = !result.leader && result.value.role === 'owner' ? 'follower' : result.value.role;
      shared = result.shared || role === 'follower' || role === 'replay';
      return { value: result.value.value as T, role, shared, stage, key, epoch: result.value.epoch };
    } catch (error) {
      failure = error;
      throw error;
    } finally {
      const e = failure as { errorType?: any; code?: string } | undefined;
      if (timed) this.events.emit('settled', {
        stage,
        key,
        role,
        shared,
        ok: failure === undefined,
        durationMs: this.options.clock.now() - startedAt,
        errorType: e?.errorType,
        errorCode: e?.code,
      });
      if (telemetry) {
        const reportedRole = role === 'none' ? (runNote?.role ?? 'none') : role;
        telemetry.count(stage, reportedRole, failure === undefined);
        span?.end({
          role: reportedRole,
          shared,
          epoch: runNote?.epoch,
          // A caller that joined another on this node waited for it the whole call.
          waitedMs: joined ? this.options.clock.now() - startedAt : runNote?.waitedMs,
          ownerTraceparent: runNote?.ownerTraceparent,
          error: failure,
        });
      }
    }
  }

  /**
   * The streaming counterpart of `execute` (see the README section "Streaming flights" and
   * stream/stream-flights.ts): every caller on every node iterates the same chunks in the owner's order.
   * Returns at once; the flight starts when the stream is first iterated or `result()` is called.
   */
  executeStream<C extends StreamChunk>(
    stage: string,
    key: string,
    supplier: ChunkSupplier<C>,
    options: ExecuteStreamOptions & { onRestart: 'restart' },
  ): FlightStream<C | FlightStreamRestart>;
  executeStream<C extends StreamChunk>(
    stage: string,
    key: string,
    supplier: ChunkSupplier<C>,
    options?: ExecuteStreamOptions & { onRestart?: 'error' },
  ): FlightStream<C>;
  executeStream<C extends StreamChunk>(
    stage: string,
    key: string,
    supplier: ChunkSupplier<C>,
    options: ExecuteStreamOptions,
  ): FlightStream<C | FlightStreamRestart>;
  executeStream<C extends StreamChunk>(stage: string, key: string, supplier: ChunkSupplier<C>, options: ExecuteStreamOptions = {}) {
    this.streams ??= new StreamFlights(this, this.options);
    return this.streams.open(stage, key, supplier, options);
  }

  /** `execute`, returning only the value. */
  async run<T>(stage: string, key: string, supplier: Supplier<T>, options?: ExecuteOptions): Promise<T> {
    return (await this.execute(stage, key, supplier, options)).value;
  }

  /**
   * Cancels an active flight cluster-wide: the owner's signal aborts, followers get
   * `FlightCancelledError`. With `options.epoch` (from a `FlightResult` or an event), only that run is
   * cancelled: a delayed cancel never cancels a newer run of the key. Resolves `false` when no matching
   * active flight was found. A `reason` string as third argument is still accepted.
   */
  async cancel(stage: string, key: string, options: string | { reason?: string; epoch?: number } = {}): Promise<boolean> {
    assertStageName(stage);
    assertRequestKey(key, stage);
    const { reason = 'cancelled', epoch } = typeof options === 'string' ? { reason: options } : options;
    if (epoch !== undefined && !Number.isSafeInteger(epoch)) {
      throw new FlightValidationError(`epoch must be an integer, got ${String(epoch)}`, { context: { stage, key } });
    }
    const policy = this.policy(stage);
    const ref = { stage, key };
    const reply = await this.call(() => this.options.coordinator.cancel(ref, { reason, ttlMs: policy.terminalTtlMs, epoch }), ref);
    if (reply.ok || epoch === undefined) this.owners.get(flightId(ref))?.abort(new FlightCancelledError(`flight cancelled: ${reason}`, { context: ref }));
    return reply.ok;
  }

  /**
   * Forgets a flight cluster-wide (Go's `singleflight.Forget`): once this resolves, the next caller on any
   * node starts a new run (a new epoch) instead of joining the running one or replaying its stored outcome.
   * The forgotten run goes on: its owner's callers on the owner node still get its value, but nothing it
   * completes is stored or put in L1, and its followers on other nodes ask again and join the new run.
   * A stored SUCCEEDED/FAILED outcome is dropped the same way (an `invalidate`), so the next caller re-runs.
   * This node's L1 entry and in-process run are forgotten at once; other nodes' L1 entries (when L1 is on)
   * live out their `l1.ttlMs`. Resolves `true` when the coordinator held a record of the flight, `false`
   * when there was none. In `local` mode only this node is affected (resolves `false`). Rejects with
   * `FlightCoordinationError` when the coordinator fails (this node's entries are forgotten anyway).
   */
  async forget(stage: string, key: string): Promise<boolean> {
    assertStageName(stage);
    assertRequestKey(key, stage);
    const ref = { stage, key };
    const id = flightId(ref);
    this.options.replayCache.delete(id);
    this.local.forget(id);
    if (this.mode === 'local') return false;
    const reply = await this.callIdempotent('forget', () => this.options.coordinator.forget(ref), ref);
    // A run of this node that completes from now on is not remembered in L1 (see ownerRun); clear again in
    // case one finished while the forget was on its way.
    this.options.replayCache.delete(id);
    return reply.ok;
  }

  /** Stops heartbeats and closes the coordinator if this instance created it. */
  async close(): Promise<void> {
    for (const run of this.owners.values()) run.abort(new FlightLeaseLostError('single-flight closed'));
    if (this.options.ownsCoordinator) await this.options.coordinator.close();
  }

  /** The run of a distributed or hybrid call (no `async` frame of its own on the distributed path). */
  private runFlight(
    stage: string,
    key: string,
    supplier: Supplier<unknown>,
    policy: StagePolicy,
    options: ExecuteOptions,
    note: TraceNote | undefined,
  ): Promise<Outcome> {
    if (this.mode === 'local') return this.runLocal(stage, key, supplier, policy, options, note);
    if (this.mode === 'distributed') return this.runDistributed(stage, key, supplier, policy, options, note);
    if (options.localFallback === false) {
      // The caller asked for cluster-wide coordination or nothing (an unsafe request under an Idempotency-Key).
      if (this.degraded) {
        return Promise.reject(new FlightCoordinationError('coordinator cooling down; this call may not run in-process', { context: { stage, key } }));
      }
      return this.runDistributed(stage, key, supplier, policy, options, note);
    }
    return this.runHybrid(stage, key, supplier, policy, options, note);
  }

  /** Hybrid mode: distributed while the coordinator answers, the in-process single-flight while it does not. */
  private async runHybrid(
    stage: string,
    key: string,
    supplier: Supplier<unknown>,
    policy: StagePolicy,
    options: ExecuteOptions,
    note: TraceNote | undefined,
  ): Promise<Outcome> {
    if (this.degraded) {
      this.events.emit('fallback', { stage, key, error: 'coordinator cooling down' });
      return this.runLocal(stage, key, supplier, policy, options, note);
    }
    try {
      return await this.runDistributed(stage, key, supplier, policy, options, note);
    } catch (error) {
      if (!isCoordinationFailure(error)) throw error;
      this.coordinatorDownUntil = this.options.clock.now() + this.options.fallbackCooldownMs;
      this.options.logger.warn({ stage, key, err: error }, 'coordination failed; serving from the in-process single-flight');
      this.events.emit('fallback', { stage, key, error: (error as Error).message });
      return this.runLocal(stage, key, supplier, policy, options, note);
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
  private execRun(
    ref: FlightRef,
    supplier: Supplier<unknown>,
    policy: StagePolicy,
    options: ExecuteOptions,
    run: RunScope,
    context: { role: 'owner' | 'local'; epoch: number | undefined; attempt: number; progress: () => void; fence?: Fence },
  ): Promise<unknown> {
    const work = () => {
      if (this.events.wants('run')) this.events.emit('run', { ...ref, role: context.role, attempt: context.attempt });
      return this.guard(policy).run(
        (scope) =>
          supplier(new SupplierContext(scope, ref.stage, ref.key, context.role, context.epoch, context.attempt, context.progress, context.fence)),
        run,
        guardMayRetry(options),
      );
    };
    return run.race(this.withSessionLock(policy, options.sessionId, run, work));
  }

  private guard(policy: StagePolicy): Guard {
    let guard = this.guards.get(policy.stage);
    if (!guard) this.guards.set(policy.stage, (guard = createGuard(policy, this.deadlines)));
    return guard;
  }

  /** Abandons `run` with a typed timeout `delayMs` from now (a run that holds no lease still has a deadline). */
  private limitRun(run: RunScope, ref: FlightRef, policy: StagePolicy, delayMs: number): void {
    run.limit(
      this.deadlines,
      Math.max(0, delayMs),
      () =>
        new FlightRunTimeoutError(`stage ${ref.stage}: the run passed maxRunMs (${policy.maxRunMs} ms) and was abandoned`, {
          context: { ...ref, maxRunMs: policy.maxRunMs },
        }),
    );
  }

  private call<T>(fn: () => Promise<T>, ref: FlightRef): Promise<T> {
    let pending: Promise<T>;
    try {
      // Promise.resolve returns a native promise as is; it only wraps a coordinator that answers otherwise.
      pending = Promise.resolve(fn());
    } catch (error) {
      return Promise.reject(toCoordinationError(error, { ...ref }));
    }
    return pending.catch((error: unknown) => {
      throw toCoordinationError(error, { ...ref });
    });
  }

  /**
   * `call`, repeated once when the first attempt's outcome is unknown (no reply by the deadline: it may
   * have landed). Safe because every coordinator operation is idempotent for the same arguments (the same
   * owner token or fence): a landed acquire answers the same epoch again, a landed complete answers OK.
   */
  private callIdempotent<T>(operation: string, fn: () => Promise<T>, ref: FlightRef): Promise<T> {
    return this.call(fn, ref).catch((error: unknown) => {
      if (!(error instanceof FlightCoordinationError) || !error.outcomeUnknown) throw error;
      this.options.logger.warn({ ...ref, operation, err: error }, 'no reply by the deadline; repeating the idempotent call once');
      return this.call(fn, ref);
    });
  }

  /** Fills L1 with a deep-frozen value; `sizeBytes` is its encoded length or estimate. */
  private remember(ref: FlightRef, value: unknown, policy: StagePolicy, sizeBytes: number): void {
    if (policy.l1.enabled) this.options.replayCache.set(flightId(ref), value, policy.l1.ttlMs, sizeBytes);
  }

  /** Decodes a stored or carried payload into the deep-frozen value callers share. */
  private decode(payload: string, policy: StagePolicy): unknown {
    const value = this.options.codec.decode(payload, { maxBytes: policy.maxResultBytes });
    this.freezeDecoded(value);
    return value;
  }

  /** Deep-freezes a value the codec decoded (faster when it is known to be fresh from `JSON.parse`). */
  private freezeDecoded(value: unknown): number {
    return this.options.decodesFreshJson ? deepFreezeParsedJson(value) : deepFreeze(value);
  }

  /** Encodes then decodes, so every role returns the same shape of value and the size cap holds everywhere. */
  private roundTrip(value: unknown, policy: StagePolicy): { payload: string; value: unknown } {
    const { codec } = this.options;
    const limits = { maxBytes: policy.maxResultBytes };
    if (codec.encodeWithCopy) return codec.encodeWithCopy(value, limits);
    const payload = codec.encode(value, limits);
    return { payload, value: codec.decode(payload, limits) };
  }

  /**
   * Local mode and the hybrid fallback: no lease, so the run is bounded by `maxRunMs` (and the guard's
   * timeout) through its own deadline. The value never leaves the process: it is deep-frozen, not encoded,
   * unless `encodeLocalResults` asks for the round trip.
   */
  private async runLocal(
    stage: string,
    key: string,
    supplier: Supplier<unknown>,
    policy: StagePolicy,
    options: ExecuteOptions,
    note: TraceNote | undefined,
  ): Promise<Outcome> {
    const ref = { stage, key };
    noteWork(note, 'local', undefined, note?.traceparent);
    const run = new RunScope();
    this.limitRun(run, ref, policy, policy.maxRunMs);
    let value: unknown;
    let size: number;
    try {
      value = await this.execRun(ref, supplier, policy, options, run, LOCAL_CONTEXT);
      if (this.options.encodeLocalResults) {
        const trip = this.roundTrip(value, policy);
        value = trip.value;
        this.freezeDecoded(value);
        size = trip.payload.length;
      } else {
        size = deepFreeze(value);
      }
    } catch (error) {
      throw toExecutionError(failureRecord(error, policy, options), { stage, key, replayed: false, cause: error });
    } finally {
      run.end(this.deadlines);
    }
    this.remember(ref, value, policy, size);
    return { value, role: 'local', trace: note };
  }

  private async runDistributed(
    stage: string,
    key: string,
    supplier: Supplier<unknown>,
    policy: StagePolicy,
    options: ExecuteOptions,
    note: TraceNote | undefined,
  ): Promise<Outcome> {
    const { coordinator, clock } = this.options;
    const ref = { stage, key };
    const lease = leaseTerms(policy);
    let joinEpoch: number | undefined;
    let waitStartedAt: number | undefined;
    let woken: 'event' | 'poll' = 'poll';
    let ownerAttempts = 0;
    let lastError: Error | undefined;
    for (;;) {
      // An owner that takes its session lock first starts PENDING; every other owner runs at once.
      const { sessionId } = options;
      const startRunning = !(policy.sessionLock.enabled && sessionId);
      const input: AcquireInput = {
        stage,
        key,
        takeoverAfterMs: lease.takeoverAfterMs,
        leaseTtlMs: lease.leaseTtlMs,
        maxRunMs: lease.maxRunMs,
        sessionId,
        ownerId: this.nodeId,
        ownerToken: randomUUID(),
        joinEpoch,
        startRunning,
        traceparent: note?.traceparent,
      };
      const reply = await this.callIdempotent('acquire', () => coordinator.acquire(input), ref);
      const { meta } = reply;
      switch (reply.outcome) {
        case 'REPLAY_SUCCESS': {
          let value: unknown;
          const payload = reply.result ?? '';
          try {
            value = this.decode(payload, policy);
          } catch (error) {
            const action = policy.onCorruptResult;
            this.events.emit('corrupt', { ...ref, error: (error as Error).message, action });
            this.options.logger.error({ ...ref, err: error, action }, 'stored result failed verification');
            if (action === 'error') throw error;
            return await this.runLocal(stage, key, supplier, policy, options, note);
          }
          this.remember(ref, value, policy, payload.length);
          const role: FlightRole = joinEpoch === undefined ? 'replay' : 'follower';
          if (role === 'replay' && this.events.wants('replay')) this.events.emit('replay', { ...ref, outcome: 'success' });
          this.emitWaited(ref, waitStartedAt, woken);
          noteWork(note, role, meta.epoch, meta.traceparent, this.sinceMs(waitStartedAt));
          return { value, role, epoch: meta.epoch, trace: note };
        }
        case 'REPLAY_FAILURE': {
          this.emitWaited(ref, waitStartedAt, woken);
          noteWork(note, joinEpoch === undefined ? 'replay' : 'follower', meta.epoch, meta.traceparent, this.sinceMs(waitStartedAt));
          if (meta.status === 'CANCELLED') {
            throw new FlightCancelledError(`flight cancelled: ${meta.errorMessage}`, { context: { ...ref, epoch: meta.epoch } });
          }
          if (joinEpoch === undefined) this.events.emit('replay', { ...ref, outcome: 'failure' });
          throw toExecutionError(failureOf(meta), { ...ref, replayed: true });
        }
        case 'FOLLOWER_WAIT': {
          if (joinEpoch !== meta.epoch && this.events.wants('follower')) this.events.emit('follower', { ...ref, epoch: meta.epoch, ownerId: meta.ownerId });
          joinEpoch = meta.epoch;
          waitStartedAt ??= clock.now();
          noteWork(note, 'follower', meta.epoch, meta.traceparent, this.sinceMs(waitStartedAt));
          const progressedAt = (options as StreamExecuteOptions).progressedAt?.() ?? 0;
          const remaining = policy.waitTimeoutMs - (clock.now() - Math.max(waitStartedAt, progressedAt));
          if (remaining <= 0) {
            if (note) note.waitedMs = this.sinceMs(waitStartedAt);
            this.events.emit('waited', { ...ref, waitedMs: clock.now() - waitStartedAt, woken: 'timeout' });
            throw new FlightWaitTimeoutError(`waited ${policy.waitTimeoutMs} ms for the owner of ${stage}`, {
              context: { ...ref, epoch: meta.epoch, ownerId: meta.ownerId },
            });
          }
          const event = await coordinator
            .waitForTerminal(ref, { epoch: meta.epoch, timeoutMs: Math.min(policy.pollIntervalMs, remaining) })
            .catch(() => null);
          woken = event ? 'event' : 'poll';
          // A small result travels with the notice: verified like a stored one, it saves the replay's round
          // trip. Only for the epoch followed; anything else (or a value that fails to decode) asks again.
          if (event?.status === 'SUCCEEDED' && event.epoch === meta.epoch && typeof event.result === 'string') {
            let value: unknown;
            let decoded = false;
            try {
              value = this.decode(event.result, policy);
              decoded = true;
            } catch (error) {
              this.options.logger.warn({ ...ref, err: error }, 'result carried by the terminal event failed verification; reading it instead');
            }
            if (decoded) {
              this.remember(ref, value, policy, event.result.length);
              this.emitWaited(ref, waitStartedAt, woken);
              noteWork(note, 'follower', meta.epoch, meta.traceparent, this.sinceMs(waitStartedAt));
              return { value, role: 'follower', epoch: meta.epoch, trace: note };
            }
          }
          continue;
        }
        case 'OWNER_NEW':
        case 'OWNER_TAKEOVER': {
          // A call that must not run twice never takes over after its own run was fenced.
          if (ownerAttempts >= (options.atMostOnce ? 1 : policy.maxAttempts)) {
            // This call holds the lease it was just given: hand it on at once instead of leaving it PENDING
            // until `takeoverAfterMs`.
            await this.releaseLease(meta, policy, ownerAttempts);
            throw lastError ?? new FlightFencedError('too many ownership attempts', { context: ref });
          }
          ownerAttempts++;
          noteWork(note, 'owner', meta.epoch, note?.traceparent, this.sinceMs(waitStartedAt));
          if (reply.outcome === 'OWNER_TAKEOVER') {
            this.events.emit('takeover', { ...ref, epoch: meta.epoch, previousEpoch: joinEpoch ?? 0, previousStatus: 'taken-over' });
          }
          const result = await this.ownerRun(meta, supplier, policy, ownerAttempts, reply.outcome === 'OWNER_TAKEOVER', options);
          if (result.kind === 'value') return { value: result.value, role: 'owner', epoch: meta.epoch, trace: note };
          lastError = result.error;
          joinEpoch = meta.epoch;
          continue;
        }
      }
    }
  }

  /** Milliseconds since `startedAt`, or undefined when the call never waited. */
  private sinceMs(startedAt: number | undefined): number | undefined {
    return startedAt === undefined ? undefined : this.options.clock.now() - startedAt;
  }

  /** Emits `waited` for a call that waited (as a follower) and was woken by `woken`. */
  private emitWaited(ref: FlightRef, startedAt: number | undefined, woken: 'event' | 'poll'): void {
    if (startedAt !== undefined && this.events.wants('waited')) {
      this.events.emit('waited', { ...ref, waitedMs: this.options.clock.now() - startedAt, woken });
    }
  }

  /** Gives up a lease this call holds but will not run: FAILED and retryable, so the next caller takes over. */
  private async releaseLease(meta: FlightMeta, policy: StagePolicy, attempts: number): Promise<void> {
    const ref = { stage: meta.stage, key: meta.requestKey };
    const fence = { ...ref, ownerId: meta.ownerId, ownerToken: meta.ownerToken, epoch: meta.epoch };
    const failure: FailureRecord = {
      type: 'OVERLOAD',
      code: FlightFencedError.code,
      message: `owner gave up after ${attempts} attempts; released for the next caller`,
      retryable: true,
    };
    try {
      await this.callIdempotent('fail', () => this.options.coordinator.fail(fence, { failure, ttlMs: policy.failureTtlMs }), ref);
    } catch (error) {
      this.options.logger.warn({ ...ref, err: error }, 'could not release the lease; it lapses after takeoverAfterMs');
      this.events.emit('coordination-error', { ...ref, error: (error as Error).message });
    }
  }

  /** Hybrid mode: the lease can no longer be renewed (coordinator unreachable); the node serves degraded. */
  private degrade(ref: FlightRef, reason: string): void {
    this.coordinatorDownUntil = this.options.clock.now() + this.options.fallbackCooldownMs;
    this.options.logger.warn({ ...ref, reason }, 'coordination failed during a run; finishing it for this node\'s callers only');
    this.events.emit('fallback', { ...ref, error: reason });
  }

  private async ownerRun(
    meta: FlightMeta,
    supplier: Supplier<unknown>,
    policy: StagePolicy,
    attempt: number,
    takeover: boolean,
    options: ExecuteOptions,
  ): Promise<OwnerResult> {
    const { coordinator, logger, clock } = this.options;
    const ref = { stage: meta.stage, key: meta.requestKey };
    const fence: Fence = { stage: ref.stage, key: ref.key, ownerId: meta.ownerId, ownerToken: meta.ownerToken, epoch: meta.epoch };
    const lease = leaseTerms(policy);
    const fencedResult = (operation: string): OwnerResult => {
      this.events.emit('fenced', { ...ref, epoch: meta.epoch, operation });
      logger.warn({ ...ref, epoch: meta.epoch, operation }, 'owner write fenced: a newer owner holds the flight');
      return { kind: 'fenced', error: new FlightFencedError(`${operation} refused: epoch ${meta.epoch} no longer owns the flight`, { context: ref }) };
    };
    if (this.events.wants('owner')) this.events.emit('owner', { ...ref, epoch: meta.epoch, takeover });
    if (meta.status !== 'RUNNING') {
      const running = await this.callIdempotent('markRunning', () => coordinator.markRunning(fence, lease), ref);
      if (!running.ok) return fencedResult('markRunning');
    }

    const id = flightId(ref);
    const run = new RunScope();
    const startedAt = clock.now();
    let lostReason: LeaseLossReason | undefined;
    /** Hybrid mode only: renewals failed (coordinator unreachable), the run goes on for this node's callers. */
    let degraded = false;
    /** The run was forgotten cluster-wide: it finishes for this node's callers, its outcome is not stored or remembered. */
    let forgotten = false;
    this.owners.set(id, run);
    const task = this.heartbeats.start({
      requestKey: `${ref.stage}|${ref.key}`,
      ownerToken: meta.ownerToken,
      logFields: () => ({ ...ref, epoch: meta.epoch }),
      intervalMs: policy.heartbeatIntervalMs,
      takeoverAfterMs: policy.takeoverAfterMs,
      maxRunMs: policy.maxRunMs,
      stallTimeoutMs: policy.stallTimeoutMs,
      renew: async () => {
        const reply = await coordinator.heartbeat(fence, lease);
        if (reply.ok) return 'ok';
        if (reply.code === 'FORGOTTEN') return 'forgotten';
        return reply.status === 'EXPIRED' ? 'expired' : reply.status === 'CANCELLED' ? 'cancelled' : 'fenced';
      },
      onLost: (reason) => {
        if (reason === 'forgotten') {
          // Forgotten cluster-wide: no lease to keep, but this node's callers still get the run's value.
          forgotten = true;
          // Callers arriving on this node from now on start a new run instead of joining this one in-process.
          this.local.forget(id);
          logger.info({ ...ref, epoch: meta.epoch }, 'run forgotten cluster-wide; finishing it for this node\'s callers only');
          this.limitRun(run, ref, policy, policy.maxRunMs - (clock.now() - startedAt));
          return;
        }
        if (reason === 'renewal-failed' && this.mode === 'hybrid') {
          // Nobody can take the flight over through an unreachable coordinator either: keep the run for
          // this node's callers, still bounded by maxRunMs, instead of failing them.
          degraded = true;
          this.degrade(ref, 'lease renewals failed; the run goes on for this node only');
          this.limitRun(run, ref, policy, policy.maxRunMs - (clock.now() - startedAt));
          return;
        }
        lostReason = reason;
        const error =
          reason === 'cancelled'
            ? new FlightCancelledError('flight cancelled', { context: ref })
            : new FlightLeaseLostError(`owner lost its lease (${reason})`, { context: { ...ref, epoch: meta.epoch, reason } });
        this.events.emit('lease-lost', { ...ref, epoch: meta.epoch, reason });
        logger.warn({ ...ref, epoch: meta.epoch, reason }, 'owner lease lost; aborting the run');
        run.abort(error);
        if (reason === 'max-run-time') {
          coordinator.expire(ref, { ttlMs: policy.terminalTtlMs }).catch((err) => logger.warn({ ...ref, err }, 'expire failed'));
        }
      },
    });
    try {
      let payload: string;
      let value: unknown;
      try {
        // Raced with the lease: once it is lost the run stops counting, even if the supplier ignores its signal.
        const raw = await this.execRun(ref, supplier, policy, options, run, {
          role: 'owner',
          epoch: meta.epoch,
          attempt,
          progress: () => task.progress(),
          fence,
        });
        ({ payload, value } = this.roundTrip(raw, policy));
        this.freezeDecoded(value);
      } catch (error) {
        // No renewal may race the write below (a late renewal refused after it is not a lost lease).
        this.heartbeats.stop(task.taskKey);
        const lost = run.aborted && !(run.reason instanceof FlightRunTimeoutError) ? (run.reason as Error) : undefined;
        if (lost instanceof FlightCancelledError) return { kind: 'fenced', error: lost };
        const failure: FailureRecord = lost
          ? { type: 'TIMEOUT', code: FlightLeaseLostError.code, message: lost.message, retryable: options.atMostOnce !== true }
          : failureRecord(error, policy, options);
        let written;
        try {
          written = await this.callIdempotent('fail', () => coordinator.fail(fence, { failure, ttlMs: policy.failureTtlMs }), ref);
        } catch (writeError) {
          logger.warn({ ...ref, err: writeError }, 'could not record the failure');
          this.events.emit('coordination-error', { ...ref, error: (writeError as Error).message });
        }
        // Follow whoever holds the flight now, unless this run itself timed out (max run time, stall,
        // failed renewals, server-side expiry): then its callers get the typed TIMEOUT at once.
        const refused = written && !written.ok && written.code !== 'FORGOTTEN' && !forgotten;
        if (refused && !degraded && (!lost || lostReason === 'fenced')) return fencedResult('fail');
        throw toExecutionError(failure, { ...ref, replayed: false, cause: error });
      }
      this.heartbeats.stop(task.taskKey);
      try {
        const written = await this.callIdempotent(
          'complete',
          () => coordinator.complete(fence, { result: payload, resultTtlMs: policy.resultTtlMs }),
          ref,
        );
        if (!written.ok && written.code === 'FORGOTTEN') forgotten = true;
        if (!written.ok && !degraded && !forgotten) return fencedResult('complete');
        if (written.ok) {
          if (this.events.wants('completed')) this.events.emit('completed', { ...ref, epoch: meta.epoch, followers: written.meta.followers });
        } else if (!forgotten) logger.warn({ ...ref, epoch: meta.epoch }, 'result refused after the lease lapsed; returning it to local callers only');
      } catch (error) {
        // The value is right; only sharing it failed. This node's callers still get it.
        logger.warn({ ...ref, err: error }, 'could not store the result; returning it to local callers only');
        this.events.emit('coordination-error', { ...ref, error: (error as Error).message });
      }
      // A forgotten run's value goes to the callers it already has, never to later ones.
      if (!forgotten) this.remember(ref, value, policy, payload.length);
      return { kind: 'value', value };
    } finally {
      this.heartbeats.stop(task.taskKey);
      run.end(this.deadlines);
      if (this.owners.get(id) === run) this.owners.delete(id);
    }
  }
}

const noProgress = () => {};
/** The supplier context fields of every local run. */
const LOCAL_CONTEXT = { role: 'local', epoch: undefined, attempt: 1, progress: noProgress } as const;

/** Creates a single-flight instance. */
export function createSingleFlight(options?: SingleFlightOptions): SingleFlight {
  return new SingleFlight(options);
}
