/**
 * Distributed single-flight: `execute(stage, key, supplier)` checks L1, coalesces the calls of this node
 * in-process, then runs the flight in the instance's mode — `distributed` (`distributed-run.ts`: acquire,
 * then the owner run or the follower wait), `local` (`local-run.ts`) or `hybrid` (distributed while the
 * coordinator answers, in-process while it does not).
 */
import {
  FlightAbortedError,
  FlightCancelledError,
  FlightConfigurationError,
  FlightCoordinationError,
  FlightLeaseLostError,
  FlightValidationError,
  isCoordinationFailure,
} from '../errors.js';
import type { FlightEvents } from '../events/emitter.js';
import type { FlightEventMap, FlightEventName, FlightRole } from '../events/types.js';
import { assertRequestKey, flightId } from '../keys/key-builder.js';
import { assertStageName, resolveStagePolicy, type StagePolicy } from '../policy/stage-policy.js';
import type { FlightMetrics } from '../telemetry/flight-metrics.js';
import { errorTypeOf, FlightTelemetry, type TraceNote } from '../telemetry/flight-telemetry.js';
import { runDistributed } from './distributed-run.js';
import { assertExecuteOptions } from './execute-options.js';
import { FlightCall, type Outcome } from './flight-call.js';
import { FlightRuntime, freshRunId } from './flight-runtime.js';
import { runLocal } from './node-stale.js';
import { joinOrStale, staleWhileRefreshingHere } from './stale-values.js';
import type { LocalDoOptions } from '../local/local-single-flight.js';
import type { FlightRef } from '../state/types.js';
import type { ExecuteOptions, FlightResult, StreamExecuteOptions, Supplier } from './types.js';
import { resolveOptions, type FlightMode, type ResolvedOptions, type SingleFlightOptions } from './options.js';
import { StreamFlights } from '../stream/stream-flights.js';
import type { ChunkSupplier } from '../stream/streamed-supplier.js';
import type { FlightStreamRestart } from '../stream/restart.js';
import type { ExecuteStreamOptions, FlightStream, StreamChunk } from '../stream/types.js';

export class SingleFlight {
  readonly nodeId: string;
  readonly mode: FlightMode;
  private readonly options: ResolvedOptions;
  /** What this instance's runs share (events, deadlines, heartbeats, owner runs, coordinator calls). */
  private readonly runtime: FlightRuntime;
  private readonly events: FlightEvents;
  private readonly policies = new Map<string, StagePolicy>();
  /** Spans and counters through `@opentelemetry/api`; undefined when it is off or not installed. */
  private readonly telemetry: FlightTelemetry | undefined;
  private streams: StreamFlights | undefined;
  private metricsHooked = false;

  constructor(options: SingleFlightOptions = {}) {
    this.options = resolveOptions(options);
    this.nodeId = this.options.nodeId;
    this.mode = this.options.mode;
    this.runtime = new FlightRuntime(this.options);
    this.events = this.runtime.events;
    this.telemetry = FlightTelemetry.create(this.options.telemetry, this.options.logger);
    // Every policy is checked now, not at first use: the shared defaults alone, then each stage over them.
    this.checkStale(resolveStagePolicy('defaults', this.options.defaults));
    for (const stage of Object.keys(this.options.stages)) this.policy(stage);
  }

  /**
   * Refuses stale values this instance could not serve (a configuration must never silently do less than
   * asked): outside local mode, stale windows need a coordinator that keeps stale copies.
   */
  private checkStale(policy: StagePolicy, fromCall = false): void {
    if ((!policy.stale.enabled && !fromCall) || this.mode === 'local') return;
    const where = fromCall ? `stage ${policy.stage}: staleFor` : `stage ${policy.stage}: stale windows`;
    if (!this.options.coordinator.keepsStaleCopies) {
      throw new FlightConfigurationError(`${where} need a coordinator that keeps stale copies (keepsStaleCopies); this one does not`, {
        context: { stage: policy.stage, option: 'stale' },
      });
    }
  }

  /**
   * Whether this instance reports to OpenTelemetry (the `telemetry` option; it also needs
   * `@opentelemetry/api` and an SDK to record anything). Bindings write to the request's span only then.
   */
  get reportsTelemetry(): boolean {
    return this.options.telemetry;
  }

  /**
   * The metrics of this call, or undefined when none are recorded. The first call with a live meter also
   * subscribes the metrics that lifecycle events carry (the per-call ones are recorded by `execute`).
   */
  private metricsOf(telemetry: FlightTelemetry | undefined): FlightMetrics | undefined {
    if (!telemetry?.metrics.live) return undefined;
    if (!this.metricsHooked) {
      this.metricsHooked = true;
      this.hookMetrics(telemetry.metrics);
    }
    return telemetry.metrics;
  }

  private hookMetrics(metrics: FlightMetrics): void {
    this.events.on('waited', (event) => metrics.waited(event));
    this.events.on('run', (event) => metrics.supplierRun(event));
    this.events.on('takeover', (event) => metrics.takeover(event));
    this.events.on('fallback', (event) => metrics.fallback(event));
    this.events.on('refresh-failed', (event) => metrics.refreshFailed(event));
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
      this.checkStale(policy);
      this.policies.set(stage, policy);
    }
    return policy;
  }

  /**
   * Whether this instance can serve stale values (the stage option `stale`, `ExecuteOptions.staleFor`): in
   * local mode (per node), or with a coordinator that keeps stale copies (memory and Redis do).
   */
  get servesStale(): boolean {
    return this.mode === 'local' || this.options.coordinator.keepsStaleCopies === true;
  }

  /** True while hybrid mode is serving from the local fallback. */
  get degraded(): boolean {
    return this.runtime.degraded;
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
    const metrics = this.metricsOf(telemetry);
    const timed = span !== undefined || metrics !== undefined || this.events.wants('settled');
    const startedAt = timed ? this.options.clock.now() : 0;
    let role: FlightRole | 'none' = 'none';
    let shared = false;
    let joined = false;
    let failure: unknown;
    try {
      assertStageName(stage);
      assertRequestKey(key, stage);
      if (typeof supplier !== 'function') throw new FlightValidationError('supplier must be a function', { context: { stage, key } });
      assertExecuteOptions(options);
      const { signal, resultTtlMs } = options;
      if (resultTtlMs !== undefined && typeof resultTtlMs !== 'function' && !(Number.isSafeInteger(resultTtlMs) && resultTtlMs > 0))
        throw new FlightValidationError(`resultTtlMs must be a positive integer or a function, got ${String(resultTtlMs)}`, {
          context: { stage, key },
        });
      if (signal?.aborted)
        throw new FlightAbortedError('the caller aborted before the call', { cause: signal.reason, context: { stage, key } });
      const policy = this.policy(stage);
      if (options.staleFor !== undefined) {
        if (typeof options.staleFor !== 'function')
          throw new FlightValidationError('staleFor must be a function', { context: { stage, key } });
        if (!policy.stale.enabled) this.checkStale(policy, true);
      }
      if (options.holdFailure !== undefined && typeof options.holdFailure !== 'function')
        throw new FlightValidationError('holdFailure must be a function', { context: { stage, key } });
      const { staleRefresh } = options;
      if (staleRefresh !== undefined && staleRefresh !== 'background' && staleRefresh !== 'caller')
        throw new FlightValidationError(`staleRefresh must be 'background' or 'caller', got ${String(staleRefresh)}`, {
          context: { stage, key },
        });
      const id = flightId({ stage, key });
      if (policy.l1.enabled) {
        const hit = this.runtime.copies.replay(id);
        if (hit) {
          role = 'l1';
          shared = true;
          if (this.events.wants('l1')) this.events.emit('l1', { stage, key });
          return { value: hit.value as T, role, shared, stage, key, epoch: hit.epoch };
        }
      }
      const call = new FlightCall(stage, key, supplier, policy, options, note, this.runtime.copies.since());
      const stale = call.acceptsStale ? staleWhileRefreshingHere(this.runtime, call, id) : undefined;
      if (stale) {
        role = 'stale';
        shared = true;
        return { value: stale.value as T, role, shared, stage, key, epoch: stale.epoch, ageMs: stale.ageMs };
      }
      const run = this.mode === 'local' ? () => runLocal(this.runtime, call) : () => this.runFlight(call);
      // A caller that wants a fresh value never joins one here that may take a stale one.
      const localId = options.fresh === true && call.keepsStale ? freshRunId(id) : id;
      const doOptions: LocalDoOptions = {
        signal,
        abandoned: options.cancelWhenAbandoned && this.mode !== 'local' ? (still) => void this.abandoned({ stage, key }, still) : undefined,
        // A streamed call joined here waits as long as the call it joined (which is bounded by progress).
        waitTimeoutMs: (options as StreamExecuteOptions).progressedAt ? undefined : policy.waitTimeoutMs,
      };
      const fn = span ? () => span.activate(run) : run;
      const result =
        call.acceptsStale && this.runtime.local.has(localId)
          ? await joinOrStale(this.runtime, call, localId, fn, doOptions)
          : await this.runtime.local.do(localId, fn, doOptions);
      joined = !result.leader;
      if (joined) runNote = result.value.trace;
      // Callers that joined another caller's run on this node followed it; they did not run the supplier.
      role = !result.leader && result.value.role === 'owner' ? 'follower' : result.value.role;
      shared = result.shared || role === 'follower' || role === 'replay' || role === 'stale';
      const answer: FlightResult<T> = { value: result.value.value as T, role, shared, stage, key, epoch: result.value.epoch };
      if (role === 'stale') answer.ageMs = result.value.ageMs;
      return answer;
    } catch (error) {
      failure = error;
      throw error;
    } finally {
      const durationMs = timed ? this.options.clock.now() - startedAt : 0;
      const ok = failure === undefined;
      if (timed && this.events.wants('settled')) {
        const e = failure as { errorType?: any; code?: string } | undefined;
        this.events.emit('settled', { stage, key, role, shared, ok, durationMs, errorType: e?.errorType, errorCode: e?.code });
      }
      if (telemetry) {
        const reportedRole = role === 'none' ? (runNote?.role ?? 'none') : role;
        metrics?.execution({
          stage,
          role: reportedRole,
          durationMs,
          // This caller did not run the supplier: it joined a run here or elsewhere, or replayed one.
          saved: ok && (joined || role === 'follower' || role === 'replay' || role === 'l1' || role === 'stale'),
          errorType: ok ? undefined : errorTypeOf(failure),
        });
        span?.end({
          role: reportedRole,
          shared,
          epoch: runNote?.epoch,
          // A caller that joined another on this node waited for it the whole call.
          waitedMs: joined ? durationMs : runNote?.waitedMs,
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
    return (this.streams ??= this.createStreams()).open(stage, key, supplier, options);
  }

  private createStreams(): StreamFlights {
    const { coordinator, clock, logger } = this.options;
    const metrics = this.metricsOf(this.telemetry);
    const streamChunks = metrics && ((stage: string, chunks: number) => metrics.streamChunks(stage, chunks));
    return new StreamFlights(this, { coordinator, clock, logger, streamChunks, hub: this.runtime.copies.streams });
  }

  /** `execute`, returning only the value. */
  async run<T>(stage: string, key: string, supplier: Supplier<T>, options?: ExecuteOptions): Promise<T> {
    return (await this.execute(stage, key, supplier, options)).value;
  }

  /**
   * Every caller of a run started here with `cancelWhenAbandoned` left: cancels it cluster-wide when this
   * node owns it, no other node waits for it and no caller joined here since (`still`). Never throws (it
   * runs detached from any caller).
   */
  private async abandoned(ref: FlightRef, still: () => boolean): Promise<void> {
    const id = flightId(ref);
    const { coordinator, logger } = this.options;
    try {
      if (!this.runtime.owners.has(id) || !coordinator.waitingNodes) return;
      const waiting = await coordinator.waitingNodes(ref);
      // A caller may have joined on this node meanwhile, or the run ended.
      if (waiting !== 0 || !still() || !this.runtime.owners.has(id)) return;
      logger.info({ ...ref }, 'every caller left the run and no other node waits for it: cancelling it');
      await this.cancel(ref.stage, ref.key, { reason: 'every caller left' });
    } catch (error) {
      logger.warn({ ...ref, err: error }, 'could not cancel a run every caller left; it goes on');
    }
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
    const reply = await this.runtime.call(() => this.options.coordinator.cancel(ref, { reason, ttlMs: policy.terminalTtlMs, epoch }), ref);
    if (reply.ok || epoch === undefined)
      this.runtime.owners.get(flightId(ref))?.abort(new FlightCancelledError(`flight cancelled: ${reason}`, { context: ref }));
    return reply.ok;
  }

  /**
   * Forgets a flight cluster-wide (Go's `singleflight.Forget`): once this resolves, the next caller on any
   * node starts a new run (a new epoch) instead of joining the running one or replaying its stored outcome.
   * The forgotten run goes on: its owner's callers on the owner node still get its value, but nothing it
   * completes is stored or put in L1, and its followers on other nodes ask again and join the new run.
   * A stored SUCCEEDED/FAILED outcome is dropped the same way (an `invalidate`), so the next caller re-runs.
   * This node's L1 entry and in-process run are forgotten at once, and no value read before the forget is
   * put in L1 after it; other nodes drop their L1 copies when the coordinator's forget notice reaches them
   * (a coordinator with `listenForgets`: the Redis ones; see the README section "Forget"). Resolves `true`
   * when the coordinator held a record of the flight, `false`
   * when there was none. In `local` mode only this node is affected (resolves `false`). Rejects with
   * `FlightCoordinationError` when the coordinator fails (this node's entries are forgotten anyway).
   */
  async forget(stage: string, key: string): Promise<boolean> {
    assertStageName(stage);
    assertRequestKey(key, stage);
    const ref = { stage, key };
    const id = flightId(ref);
    this.runtime.forgetHere(id);
    if (this.mode === 'local') return false;
    try {
      return (await this.runtime.callIdempotent('forget', () => this.options.coordinator.forget(ref), ref)).ok;
    } finally {
      // A call that started while the forget was on its way may have read the old value before the forget
      // landed: its fill is refused too, so once this resolves no caller on this node gets the old value.
      this.runtime.forgetHere(id);
    }
  }

  /** Stops heartbeats, waits for results still being stored (`storeInBackground`) and closes the coordinator if this instance created it. */
  async close(): Promise<void> {
    for (const run of this.runtime.owners.values()) run.abort(new FlightLeaseLostError('single-flight closed'));
    this.runtime.copies.close();
    // Values already answered are still stored for later callers.
    await Promise.allSettled(this.runtime.background);
    if (this.options.ownsCoordinator) await this.options.coordinator.close();
  }

  /** The run of a distributed or hybrid call (no `async` frame of its own on the distributed path). */
  private runFlight(call: FlightCall): Promise<Outcome> {
    const { runtime } = this;
    if (this.mode === 'local') return runLocal(runtime, call);
    if (this.mode === 'distributed') return runDistributed(runtime, call);
    if (call.options.localFallback === false) {
      // The caller asked for cluster-wide coordination or nothing (an unsafe request under an Idempotency-Key).
      if (runtime.degraded) {
        return Promise.reject(
          new FlightCoordinationError('coordinator cooling down; this call may not run in-process', { context: { ...call.ref } }),
        );
      }
      return runDistributed(runtime, call);
    }
    return this.runHybrid(call);
  }

  /** Hybrid mode: distributed while the coordinator answers, the in-process single-flight while it does not. */
  private async runHybrid(call: FlightCall): Promise<Outcome> {
    const { runtime } = this;
    const { stage, key } = call.ref;
    if (runtime.degraded) {
      this.events.emit('fallback', { stage, key, error: 'coordinator cooling down' });
      return runLocal(runtime, call);
    }
    try {
      return await runDistributed(runtime, call);
    } catch (error) {
      if (!isCoordinationFailure(error)) throw error;
      runtime.coordinatorDown();
      this.options.logger.warn({ stage, key, err: error }, 'coordination failed; serving from the in-process single-flight');
      this.events.emit('fallback', { stage, key, error: (error as Error).message });
      return runLocal(runtime, call);
    }
  }
}

/** Creates a single-flight instance. */
export function createSingleFlight(options?: SingleFlightOptions): SingleFlight {
  return new SingleFlight(options);
}
