/**
 * One coalesced request on its way through the flight: its state, the supplier that runs its handler
 * when it owns the run (recording the response and releasing it to its client as soon as it is known
 * to be shareable), and, as its own `ExecuteOptions`, what the flight reads of it.
 */
import { type ExecuteOptions, type FlightContext, type SingleFlight } from '@flight/core';
import { activeSpan, untilAborted, type SpanHandle } from '@flight/core/adapter';
import { UnshareableResponse, type FlightHttpError } from './errors.js';
import type { HttpExchange, HttpFlightRole } from './exchange.js';
import { keepFor, staleWindowsOf } from './freshness.js';
import type { ResolvedHttpFlightOptions } from './options.js';
import type { FlightPlan } from './plan.js';
import type { OwnerRun, RecordResult } from './recorder.js';
import { toShared, unsharedOutcome, unshareableReason, type HttpFlightValue, type UnsharedOutcome } from './response.js';

/**
 * Tells the client its role (the role header) and records it as `flight.role` on the request's server span
 * (`span`: the span active when the request arrived, with OpenTelemetry's HTTP instrumentation).
 */
export function tellRole<Req>(
  exchange: HttpExchange<Req>,
  role: HttpFlightRole,
  roleHeader: string | undefined,
  span: SpanHandle | undefined,
): void {
  if (roleHeader) exchange.setHeader(roleHeader, role);
  span?.setAttribute('flight.role', role);
}

/** The request's server span, when the single-flight reports telemetry (`telemetry: false` leaves it alone). */
export function serverSpan(singleFlight: SingleFlight): SpanHandle | undefined {
  return singleFlight.reportsTelemetry ? activeSpan() : undefined;
}

/** The failure of a run for a request already answered: its callers stop waiting (never kept: `keepFailures: false`). */
export class DetachedRequest extends Error {
  readonly code = 'E_FLIGHT_HTTP_DETACHED';
}

/**
 * Releases an owner's recorded response: `true` once handed over, or (a framework that sends it later: Koa)
 * a promise whose rejection (Koa hands the handler's own error to the framework this way) is handled until
 * the caller awaits it.
 */
function releaseOwner(run: OwnerRun): Promise<void> | true {
  let released: Promise<void>;
  try {
    const pending = run.release();
    if (pending === undefined) return true;
    released = Promise.resolve(pending);
  } catch (error) {
    released = Promise.reject(error);
  }
  released.catch(() => {});
  return released;
}

/**
 * An unshareable response worth holding: one whose kind says it is never shared (`private`, `no-store`, a
 * `Vary` outside the key, too large…). An error status may be a passing failure (the next burst then shares one run
 * again), and a run past its time is no response at all.
 */
function holdsUnshareable(error: unknown): boolean {
  return (
    error instanceof UnshareableResponse && error.reason !== 'timeout' && error.reason !== 'status' && error.reason !== 'handler-error'
  );
}

/** Why a recording that did not complete cannot be shared. */
function unrecorded(outcome: Exclude<RecordResult, { kind: 'complete' }>): UnshareableResponse {
  if (outcome.kind === 'overflow') return new UnshareableResponse('too-large', undefined);
  if (outcome.kind === 'unrecordable') return new UnshareableResponse('body', undefined);
  return new UnshareableResponse('status', outcome.status);
}

/** A signal aborted when `a` or `b` aborts; `dispose` removes its listeners (`a` may outlive the request). */
function anySignal(a: AbortSignal, b: AbortSignal): { signal: AbortSignal; dispose(): void } {
  if (a.aborted) return { signal: a, dispose() {} };
  const controller = new AbortController();
  const onA = () => controller.abort(a.reason);
  const onB = () => controller.abort(b.reason);
  a.addEventListener('abort', onA, { once: true });
  b.addEventListener('abort', onB, { once: true });
  return {
    signal: controller.signal,
    dispose() {
      a.removeEventListener('abort', onA);
      b.removeEventListener('abort', onB);
    },
  };
}

/**
 * One coalesced request: its state, its supplier and, as its own `ExecuteOptions`, the signal the flight
 * reads (made only then: an L1 hit never does, and a signal costs microseconds). A class, so a request
 * allocates one object instead of a closure per step.
 */
export class FlightCall<Req> implements ExecuteOptions {
  run: OwnerRun | undefined;
  /** The owner's response handed to its client (`true`, or the promise of it), as soon as it is known to be shareable. */
  released: Promise<void> | true | undefined;
  answered = false;
  conflicted = false;
  /** Only `inFlight: 'conflict'` detaches a caller itself (to answer 409 instead of following). */
  readonly detach: AbortController | undefined;
  readonly idempotent: boolean;
  /** An unsafe request never runs unless its key is coordinated cluster-wide (no in-process fallback). */
  readonly localFallback: boolean;
  /** An unsafe request's run is never repeated automatically: its failures are stored non-retryable. */
  readonly atMostOnce: boolean;
  /**
   * A safe request's failure (its response may not be shared, or it was answered already) concerns its run
   * only: the next request starts a new run instead of having it replayed, and the guard never retries it.
   */
  readonly keepFailures: boolean;
  /** A coalesced response is reused after its run only while fresh (freshness.ts); an idempotent one for the stage's time. */
  readonly resultTtlMs: typeof keepFor | undefined;
  /** A coalesced response may be served stale by its `stale-while-revalidate` / `stale-if-error` (freshness.ts). */
  readonly staleFor: typeof staleWindowsOf | undefined;
  /** An idempotent request's replay is its record: never a stale copy. */
  readonly fresh: boolean;
  /** The handler runs for its own request: the request given a stale value's refresh runs it and waits. */
  readonly staleRefresh = 'caller';
  /** A safe request's unshareable response is kept `holdUnshareableMs`: the next requests run their own handler at once. */
  readonly holdFailure: ((error: unknown) => number | undefined) | undefined;
  readonly supplier: (context: FlightContext) => Promise<HttpFlightValue>;
  private signalOf: { signal: AbortSignal; dispose(): void } | AbortSignal | undefined;
  /** The request's server span, taken when the request arrived (the supplier runs under another). */
  /** Set when the request resumes a stream after an event id (resumable routes). */
  resuming = false;
  private readonly span: SpanHandle | undefined;

  constructor(
    readonly exchange: HttpExchange<Req>,
    readonly flight: FlightPlan,
    private readonly options: ResolvedHttpFlightOptions<Req>,
  ) {
    this.span = serverSpan(options.singleFlight);
    this.idempotent = flight.fingerprint !== undefined;
    this.localFallback = !this.idempotent;
    this.atMostOnce = this.idempotent;
    this.keepFailures = this.idempotent;
    this.resultTtlMs = this.idempotent ? undefined : keepFor;
    this.staleFor = options.serveStale && !this.idempotent ? staleWindowsOf : undefined;
    this.fresh = this.idempotent;
    const holdMs = options.holdUnshareableMs;
    this.holdFailure = this.idempotent || holdMs === 0 ? undefined : (error) => (holdsUnshareable(error) ? holdMs : undefined);
    this.detach = flight.conflict ? new AbortController() : undefined;
    this.supplier = this.supply.bind(this);
  }

  get signal(): AbortSignal {
    const signal = (this.signalOf ??= this.detach ? anySignal(this.exchange.signal, this.detach.signal) : this.exchange.signal);
    return signal instanceof AbortSignal ? signal : signal.signal;
  }

  /** Removes what this call listens to on signals that outlive it. */
  end(): void {
    if (this.signalOf && !(this.signalOf instanceof AbortSignal)) this.signalOf.dispose();
  }

  /** Tells this call's client its role. */
  tell(role: HttpFlightRole): void {
    tellRole(this.exchange, role, this.options.roleHeader, this.span);
  }

  /** Checks that this call may run the handler for `context`, and tells its client its role. */
  claim(context: FlightContext): void {
    // Never run the handler twice for one request, nor for a request already answered.
    if (this.run) throw new UnshareableResponse('timeout', undefined);
    if (this.answered || this.conflicted) throw new DetachedRequest('the request was already answered');
    this.tell(context.role);
  }

  async supply(context: FlightContext): Promise<HttpFlightValue> {
    const { exchange, options } = this;
    this.claim(context);
    const run = (this.run = exchange.record(options.maxBodyBytes));
    // A handler that answered synchronously (`res.json`) needs no race with the run's signal.
    const outcome = run.outcome ?? (await untilAborted(run.result, context.signal));
    if (outcome.kind !== 'complete') return this.unshared(unrecorded(outcome));
    const refused = unshareableReason(outcome.response, options);
    if (refused) return this.unshared(refused);
    const shared = toShared(outcome.response, options, exchange.request.method, this.flight.fingerprint);
    // The owner's client gets its response now, not after the flight's bookkeeping (storing the result,
    // waking followers) settles: that changes nothing it receives, only when.
    const released = (this.released = releaseOwner(run));
    if (exchange.ownerReleased) {
      if (released === true) exchange.ownerReleased();
      else
        released.then(
          () => exchange.ownerReleased!(),
          () => {},
        );
    }
    return shared;
  }

  /**
   * The owner's response may not be shared. A safe request's run fails with the typed reason (its callers
   * on this node get it; nobody later does); an idempotent request's handler ran, so its outcome is the
   * flight's value, recorded for every later caller with the key.
   */
  private unshared(refused: UnshareableResponse): UnsharedOutcome {
    if (!this.idempotent) throw refused;
    return unsharedOutcome(refused, this.flight.fingerprint);
  }

  /**
   * An owner answers its client: the response released already, or its own as the handler gives it. A
   * promise only while that is still under way (Koa), so the common owner costs no promise here.
   */
  answerOwner(run: OwnerRun): Promise<void> | undefined {
    const { released } = this;
    if (released === undefined) return run.release() ?? undefined;
    return released === true ? undefined : released;
  }

  reject(error: FlightHttpError, role?: HttpFlightRole): void {
    this.answered = true;
    if (role) this.tell(role);
    this.exchange.reject(error);
  }
}
