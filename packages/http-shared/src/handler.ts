/**
 * The framework-agnostic HTTP single-flight handler. An adapter describes one request as an
 * `HttpExchange` (a normalized request plus a few verbs: run the handler recording its response,
 * replay a shared response, answer an error, or just run the handler); this module decides whether
 * the request may be coalesced, computes its flight key, runs the flight and answers every caller.
 */
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  buildFlightKey,
  FlightExecutionError,
  FlightWaitTimeoutError,
  hashPart,
  untilAborted,
  type ExecuteOptions,
  type FlightContext,
  type FlightRole,
  type KeyPart,
} from '@flight/core';
import {
  FlightBodyTooLargeError,
  FlightHttpError,
  FlightHttpTimeoutError,
  FlightHttpUnavailableError,
  FlightIdempotencyConflictError,
  FlightIdempotencyIdentityRequiredError,
  FlightIdempotencyKeyMissingError,
  FlightIdempotencyKeyReusedError,
  FlightSharedFailureError,
  unshareableOf,
  UnshareableResponse,
  type UnshareableOutcome,
} from './errors.js';
import { ageOf, keepFor, staleFor } from './freshness.js';
import { resolveHttpFlightOptions, type FlightKeySpec, type HttpFlightOptions } from './options.js';
import type { OwnerRun, RecordResult } from './recorder.js';
import {
  canonicalQuery,
  declaredLength,
  hasBody,
  headerValue,
  parsedBodyBytes,
  parseIdempotencyKey,
  requestFingerprint,
  requestHost,
  type HttpRequestInfo,
} from './request.js';
import {
  isSharedResponse,
  isUnsharedOutcome,
  toShared,
  unsharedOutcome,
  unshareableReason,
  type HttpFlightValue,
  type SharedResponse,
  type UnsharedOutcome,
} from './response.js';
import { streamFlight } from './stream-flight.js';
import type { StreamedOwnerRun } from './stream-tee.js';

/** How the response was obtained, as told by the role header. `bypass`: not coalesced, the handler ran. */
export type HttpFlightRole = FlightRole | 'bypass';

/** One request, as an adapter presents it to the handler. */
export interface HttpExchange<Req> {
  /** The framework's request (or context), handed to the `key` function. */
  readonly native: Req;
  readonly request: HttpRequestInfo;
  /** Fires when the client goes away before its response was sent. */
  readonly signal: AbortSignal;
  /** The body a body parser already produced, or `undefined`. */
  parsedBody(): unknown;
  /** Reads the raw body (refusing past `limit` with `FlightBodyTooLargeError`) and leaves it for the handler. */
  readBody(limit: number): Promise<Buffer>;
  setHeader(name: string, value: string): void;
  /** Runs the downstream handler, recording its response without sending it. */
  record(maxBodyBytes: number): OwnerRun;
  /** Runs the downstream handler normally. */
  passthrough(): Promise<void> | void;
  /** Answers with a shared response. */
  replay(response: SharedResponse): void;
  /** Answers with an error of the middleware (problem+json). */
  reject(error: FlightHttpError): void;
  /**
   * Optional: called once an owner's response has been handed to its client (`OwnerRun.release()` settled),
   * while the flight's bookkeeping (storing the result, waking followers) may still run. An adapter whose
   * framework sends the response when the middleware returns (Koa) returns from the middleware then.
   */
  ownerReleased?(): void;
  /** Optional (routes with `stream: true`): runs the downstream handler, its writes going to the client live and teed to the flight. */
  recordStream?(): StreamedOwnerRun;
  /** Optional (routes with `stream: true`): answers with a shared head, then `body` as it comes. */
  replayStream?(head: SharedResponse, body: Readable): void;
}

/** What `purge` reads of a request: the framework's request and its normalized view. */
export type HttpRequestView<Req> = Pick<HttpExchange<Req>, 'native' | 'request'>;

/** The handler of one middleware instance, and the purge of its flights. */
export interface HttpFlightHandler<Req> {
  (exchange: HttpExchange<Req>): Promise<void>;
  /**
   * Forgets, cluster-wide, the flights a request to the same URL would be coalesced under (one per
   * coalesced method, `GET` and `HEAD` by default, whatever the purge request's own method), with the same
   * `key`, identity, `vary` headers and host: the running flight is no longer joined and a stored response
   * is dropped, so the next such request runs the handler again (`SingleFlight.forget`). Resolves `true`
   * when a flight was found. Idempotency-Key replays are not purged by it.
   */
  purge(request: HttpRequestView<Req>): Promise<boolean>;
}

type Plan = { kind: 'bypass' } | { kind: 'flight'; key: string; fingerprint: string | undefined; conflict: boolean; stream?: boolean };

const BYPASS: Plan = { kind: 'bypass' };

/** How much longer than its computed end a request waits for a stale stored copy to go (ms). */
const STALE_MARGIN_MS = 25;
/** How many stale stored copies a request waits out before it runs the handler itself. */
const MAX_STALE_ROUNDS = 3;

/** The key of a middleware without a `key` function: path and query, no identity (one object for every request). */
const DEFAULT_SPEC: { parts?: readonly KeyPart[]; identity?: string } = Object.freeze({});

/** The failure of a run for a request already answered: its callers stop waiting (never kept: `keepFailures: false`). */
class DetachedRequest extends Error {
  readonly code = 'E_FLIGHT_HTTP_DETACHED';
}

/**
 * The call failed because the run it joined on this node belonged to a request already answered, which
 * refused to run the handler (a streamed follower cut short whose call was then given the next run): no
 * handler ran. A request that joined such a run in-process must not be answered as if its handler had failed.
 */
function joinedRefusedRun(error: unknown): boolean {
  return error instanceof FlightExecutionError && error.cause instanceof DetachedRequest;
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

/** Why a recording that did not complete cannot be shared. */
function unrecorded(outcome: Exclude<RecordResult, { kind: 'complete' }>): UnshareableResponse {
  if (outcome.kind === 'overflow') return new UnshareableResponse('too-large', undefined);
  if (outcome.kind === 'unrecordable') return new UnshareableResponse('body', undefined);
  return new UnshareableResponse('status', outcome.status);
}

/** True when the flight failed because its run or this caller's wait ran out of time. */
function isTimeout(error: unknown): boolean {
  return error instanceof FlightWaitTimeoutError || (error instanceof FlightExecutionError && error.errorType === 'TIMEOUT');
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

function normalizeSpec(spec: Exclude<FlightKeySpec, null | undefined>): { parts?: readonly KeyPart[]; identity?: string } {
  if (typeof spec === 'string') return { parts: [spec] };
  if (Array.isArray(spec)) return { parts: spec as readonly KeyPart[] };
  const object = spec as Exclude<FlightKeySpec, string | readonly KeyPart[]>;
  const parts = object.parts === undefined ? undefined : typeof object.parts === 'string' ? [object.parts] : object.parts;
  const identity = object.identity === undefined || object.identity === null ? undefined : String(object.identity);
  return { ...(parts ? { parts } : {}), ...(identity !== undefined ? { identity } : {}) };
}

/** Creates the handler of one middleware instance. Options are validated here, once. */
export function createHttpFlightHandler<Req>(input: HttpFlightOptions<Req>): HttpFlightHandler<Req> {
  const options = resolveHttpFlightOptions(input);
  const { singleFlight, stage } = options;
  /** `stage:http:`, validated once: a coalescing key is this, the method and one digest (all safe key parts). */
  const httpKeyPrefix = `${buildFlightKey(stage, ['http'])}:`;
  /** Idempotency keys in flight on this node (`inFlight: 'conflict'`). */
  const inFlightHere = new Set<string>();

  const setRole = (exchange: HttpExchange<Req>, role: HttpFlightRole) => {
    if (options.roleHeader) exchange.setHeader(options.roleHeader, role);
  };

  const keyOf = (exchange: HttpRequestView<Req>): { parts?: readonly KeyPart[]; identity?: string } | null => {
    if (!options.key) return DEFAULT_SPEC;
    const spec = options.key(exchange.native);
    return spec === null || spec === undefined ? null : normalizeSpec(spec);
  };

  /**
   * Decides how to handle a request: synchronously for the common case, a promise only when an idempotent
   * request's body has to be read first.
   */
  function plan(exchange: HttpExchange<Req>): Plan | Promise<Plan> {
    const { request } = exchange;
    const { headers, method } = request;
    const declared = declaredLength(headers);
    if (declared !== undefined && declared > options.maxRequestBodyBytes) {
      throw new FlightBodyTooLargeError(`request body of ${declared} bytes is above the limit of ${options.maxRequestBodyBytes} bytes`, {
        context: { limit: options.maxRequestBodyBytes, size: declared },
      });
    }
    if (options.idempotency?.methods.has(method)) return planIdempotent(exchange, options.idempotency);
    if (!options.methods.has(method)) return BYPASS;
    if (headers.range !== undefined || headers['if-range'] !== undefined) return BYPASS;
    if (!options.key && hasBody(headers)) return BYPASS;
    const key = coalescingKey(exchange, method);
    if (key === null) return BYPASS;
    const stream = options.stream && method !== 'HEAD' && exchange.recordStream !== undefined;
    return { kind: 'flight', key, fingerprint: undefined, conflict: false, stream };
  }

  /** The flight key of a coalesced request to this URL under `method`, or null when it would not be coalesced. */
  function coalescingKey(view: HttpRequestView<Req>, method: string): string | null {
    const { request } = view;
    const { headers } = request;
    const spec = keyOf(view);
    if (spec === null) return null;
    if (spec.identity === undefined) {
      for (const name of options.credentialHeaders) if (headers[name] !== undefined) return null;
    }
    const parts = spec.parts ?? [request.path, request.query.length === 0 ? '' : canonicalQuery(request.query)];
    const vary: (string | null)[] = [];
    for (const name of options.vary) vary.push(headerValue(headers, name) ?? null);
    // One hash of the whole tuple: JSON keeps the parts apart, so no two tuples share a text.
    return `${httpKeyPrefix}${method}:${hashPart(JSON.stringify([parts, vary, hostOf(headers), spec.identity ?? null]))}`;
  }

  async function purge(view: HttpRequestView<Req>): Promise<boolean> {
    const keys: string[] = [];
    for (const method of options.methods) {
      const key = coalescingKey(view, method);
      if (key !== null) keys.push(key);
    }
    const forgotten = await Promise.all(keys.map((key) => singleFlight.forget(stage, key)));
    return forgotten.includes(true);
  }

  async function planIdempotent(exchange: HttpExchange<Req>, idempotency: NonNullable<typeof options.idempotency>): Promise<Plan> {
    const { request } = exchange;
    const { headers, method } = request;
    const raw = headers[idempotency.header];
    if (raw === undefined) {
      if (idempotency.required) throw new FlightIdempotencyKeyMissingError(`${method} ${request.path} requires an Idempotency-Key header`);
      return BYPASS;
    }
    const idempotencyKey = parseIdempotencyKey(request.headerLines(idempotency.header) ?? raw, idempotency.maxKeyLength);
    const parsed = exchange.parsedBody();
    const body =
      parsed !== undefined
        ? parsedBodyBytes(parsed)
        : hasBody(headers)
          ? await exchange.readBody(options.maxRequestBodyBytes)
          : Buffer.alloc(0);
    const spec = keyOf(exchange);
    // Keys are scoped per identity, so one client can never replay another's response by reusing its key.
    // A credentialed request without one is refused, never keyed by its raw credentials: a retry with a
    // refreshed token would run it again.
    const identity = spec?.identity;
    if (identity === undefined) {
      const credential = options.credentialHeaders.find((name) => headers[name] !== undefined);
      if (credential !== undefined) {
        throw new FlightIdempotencyIdentityRequiredError(
          `${method} ${request.path} carries ${credential} but the flight middleware has no identity for it: give key: (req) => ({ identity: <the authenticated user or client> }) so a retry with refreshed credentials finds its first run (or credentialHeaders: [] when the Idempotency-Key alone identifies the client); the request was not run`,
          { context: { credential } },
        );
      }
    }
    return {
      kind: 'flight',
      key: buildFlightKey(stage, ['idem', hashPart(JSON.stringify([hostOf(headers), identity ?? null, idempotencyKey]))]),
      fingerprint: requestFingerprint(request, body),
      conflict: idempotency.inFlight === 'conflict',
    };
  }

  /** The host the request was sent to (`:authority` or `Host`), in the key unless `shareAcrossHosts`. */
  const hostOf = (headers: HttpRequestInfo['headers']): string | null => (options.shareAcrossHosts ? null : requestHost(headers));

  /**
   * One coalesced request: its state, its supplier and, as its own `ExecuteOptions`, the signal the flight
   * reads (made only then: an L1 hit never does, and a signal costs microseconds). A class, so a request
   * allocates one object instead of a closure per step.
   */
  class FlightCall implements ExecuteOptions {
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
    readonly supplier: (context: FlightContext) => Promise<HttpFlightValue>;
    private signalOf: { signal: AbortSignal; dispose(): void } | AbortSignal | undefined;

    constructor(
      readonly exchange: HttpExchange<Req>,
      readonly flight: Extract<Plan, { kind: 'flight' }>,
    ) {
      this.idempotent = flight.fingerprint !== undefined;
      this.localFallback = !this.idempotent;
      this.atMostOnce = this.idempotent;
      this.keepFailures = this.idempotent;
      this.resultTtlMs = this.idempotent ? undefined : keepFor;
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

    /** Checks that this call may run the handler for `context`, and tells its client its role. */
    claim(context: FlightContext): void {
      // Never run the handler twice for one request, nor for a request already answered.
      if (this.run) throw new UnshareableResponse('timeout', undefined);
      if (this.answered || this.conflicted) throw new DetachedRequest('the request was already answered');
      setRole(this.exchange, context.role);
    }

    async supply(context: FlightContext): Promise<HttpFlightValue> {
      const { exchange } = this;
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
      if (role) setRole(this.exchange, role);
      this.exchange.reject(error);
    }
  }

  /**
   * Runs the flight of one request. `rejoined`: this is the request's second flight, after the run it joined
   * on this node turned out to be one no handler could run (see `joinedRefusedRun`). `staleRounds`: how many
   * stored responses it met that were no longer fresh (see `afterStale`).
   */
  async function runFlight(
    exchange: HttpExchange<Req>,
    flight: Extract<Plan, { kind: 'flight' }>,
    rejoined = false,
    staleRounds = 0,
  ): Promise<void> {
    const call = new FlightCall(exchange, flight);
    const { idempotent } = call;
    let unsubscribe: (() => void) | undefined;

    if (flight.conflict) {
      if (inFlightHere.has(flight.key)) {
        return exchange.reject(new FlightIdempotencyConflictError('a request with this Idempotency-Key is still being processed'));
      }
      inFlightHere.add(flight.key);
      // Another node runs it: this call became a follower. Answer 409 instead of waiting.
      unsubscribe = singleFlight.on('follower', (event) => {
        if (event.stage === stage && event.key === flight.key && !call.run) {
          call.conflicted = true;
          call.detach?.abort(new Error('in flight elsewhere'));
        }
      });
    }

    try {
      if (flight.stream) {
        const stale = await streamFlight(call, flight.key, options, setRole);
        return stale ? await afterStale(call, flight, stale, staleRounds) : undefined;
      }
      const result = await singleFlight.execute(stage, flight.key, call.supplier, call);
      if (call.run) {
        const answering = call.answerOwner(call.run);
        if (answering) await answering;
        return;
      }
      const value = result.value;
      const unshared = isUnsharedOutcome(value);
      if (!unshared && !isSharedResponse(value)) throw new TypeError('the shared value is not an HTTP response');
      const role: HttpFlightRole = result.role === 'owner' || result.role === 'local' ? 'follower' : result.role;
      if (idempotent && value.fp !== flight.fingerprint) {
        return call.reject(new FlightIdempotencyKeyReusedError('this Idempotency-Key was used with a different request'), role);
      }
      if (unshared) return answerUnshared(call, value.unshared);
      if (role === 'replay' || role === 'l1') {
        const stale = idempotent ? 0 : staleFor(value);
        if (stale) return await afterStale(call, flight, stale, staleRounds);
        const age = ageOf(value);
        if (age !== undefined) exchange.setHeader('age', String(age));
      }
      call.answered = true;
      setRole(exchange, role);
      return exchange.replay(value);
    } catch (error) {
      if (call.run) {
        // An owner whose client went away still finishes, so the others get the response.
        if (exchange.signal.aborted) {
          await call.run.result;
          return;
        }
        // The owner answers with its own response (when the handler gives it), whatever happened to sharing it.
        const answering = call.answerOwner(call.run);
        if (answering) await answering;
        return;
      }
      if (call.conflicted) {
        return call.reject(new FlightIdempotencyConflictError('a request with this Idempotency-Key is still being processed'));
      }
      if (exchange.signal.aborted) {
        call.answered = true;
        return; // the client went away: nobody to answer
      }
      // Asked once more: the run it joined never ran a handler, so no failure of this request's handler is known.
      if (!rejoined && !idempotent && joinedRefusedRun(error)) return runFlight(exchange, flight, true);
      const unshareable = error instanceof FlightExecutionError ? unshareableOf(error) : undefined;
      if (unshareable) return answerUnshared(call, unshareable, error);
      if (isTimeout(error)) {
        // The run it joined is too slow: running the same slow handler again for each caller would only add load.
        return call.reject(new FlightHttpTimeoutError('the shared request did not finish in time', { cause: error }), 'follower');
      }
      if (idempotent) {
        if (error instanceof FlightExecutionError && error.replayed) {
          // A recorded failure of a run that did take place: it is not run again.
          return call.reject(new FlightIdempotencyConflictError('the response to this Idempotency-Key cannot be replayed'), 'follower');
        }
        return call.reject(
          new FlightHttpUnavailableError('the idempotent request could not be coordinated; it was not run', { cause: error }),
        );
      }
      // A safe request whose flight could not be coordinated: run it here.
      return runHere(call);
    } finally {
      call.end();
      unsubscribe?.();
      if (flight.conflict) inFlightHere.delete(flight.key);
    }
  }

  /**
   * A request met a stored response that may no longer be replayed (its freshness is over, its copy kept
   * only for the callers that joined its run): it waits the `waitMs` until the copy is gone (plus
   * `STALE_MARGIN_MS`: the copy was stored a round trip after its time was computed) and asks again,
   * joining the next run with every other such request. After `MAX_STALE_ROUNDS` such rounds it runs the
   * handler itself.
   */
  async function afterStale(call: FlightCall, flight: Extract<Plan, { kind: 'flight' }>, waitMs: number, rounds: number): Promise<void> {
    if (rounds >= MAX_STALE_ROUNDS) return runHere(call);
    try {
      await sleep(waitMs + STALE_MARGIN_MS, undefined, { signal: call.exchange.signal });
    } catch {
      call.answered = true;
      return; // the client went away: nobody to answer
    }
    return runFlight(call.exchange, flight, false, rounds + 1);
  }

  /** Answers a caller of a run whose response was not shared: with the owner's failure, or by running the handler itself. */
  function answerUnshared(call: FlightCall, outcome: UnshareableOutcome, cause?: unknown): void | Promise<void> {
    if (outcome.reason === 'status' && (call.idempotent || options.onUnshareable === 'fail')) {
      return call.reject(
        new FlightSharedFailureError(`the shared request failed with status ${outcome.status}`, { status: outcome.status }),
        'follower',
      );
    }
    if (outcome.reason === 'timeout') {
      // The run it joined is too slow: running the same slow handler again for each caller would only add load.
      return call.reject(new FlightHttpTimeoutError('the shared request did not finish in time', { cause }), 'follower');
    }
    if (call.idempotent) {
      return call.reject(new FlightIdempotencyConflictError('the response to this Idempotency-Key cannot be replayed'), 'follower');
    }
    return runHere(call);
  }

  /** A safe request that cannot get a shared response runs the handler itself. */
  function runHere(call: FlightCall): Promise<void> | void {
    call.answered = true;
    setRole(call.exchange, 'bypass');
    return call.exchange.passthrough();
  }

  return Object.assign(handle, { purge });

  /** Plans the request, then runs it: no extra promise when the plan is synchronous (the common case). */
  function handle(exchange: HttpExchange<Req>): Promise<void> {
    try {
      const planned = plan(exchange);
      if (planned instanceof Promise)
        return planned.then(
          (decided) => dispatch(exchange, decided),
          (error: unknown) => refuse(exchange, error),
        );
      return dispatch(exchange, planned);
    } catch (error) {
      return refuse(exchange, error);
    }
  }

  /** Answers a request the plan refused (a `FlightHttpError`); anything else is the framework's to answer. */
  async function refuse(exchange: HttpExchange<Req>, error: unknown): Promise<void> {
    if (error instanceof FlightHttpError) return exchange.reject(error);
    throw error;
  }

  function dispatch(exchange: HttpExchange<Req>, decided: Plan): Promise<void> {
    return decided.kind === 'bypass' ? bypass(exchange) : runFlight(exchange, decided);
  }

  /** A request that is not coalesced: the handler runs as if the middleware were not there. */
  async function bypass(exchange: HttpExchange<Req>): Promise<void> {
    setRole(exchange, 'bypass');
    return exchange.passthrough();
  }
}
