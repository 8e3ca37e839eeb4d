/**
 * The framework-agnostic HTTP single-flight handler. An adapter describes one request as an
 * `HttpExchange` (exchange.ts); a request's life is then: its plan (plan.ts: coalesced or not, under which
 * key), its flight (`runFlight` here, with the request as a `FlightCall`, flight-call.ts; streamed routes
 * through stream-flight.ts), and its answer: the owner's own response, a replay of the shared one (only
 * while fresh, freshness.ts), a typed error, or the handler run for this request alone.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { FlightExecutionError, FlightStreamExpiredError, FlightWaitTimeoutError } from '@flight/core';
import {
  FlightHttpError,
  FlightHttpTimeoutError,
  FlightHttpUnavailableError,
  FlightIdempotencyConflictError,
  FlightIdempotencyKeyReusedError,
  FlightResumeExpiredError,
  FlightResumeInvalidError,
  FlightResumeMismatchError,
  FlightSharedFailureError,
  unshareableOf,
  type UnshareableOutcome,
} from './errors.js';
import type { HttpExchange, HttpFlightRole, HttpRequestView } from './exchange.js';
import { DetachedRequest, FlightCall, serverSpan, tellRole } from './flight-call.js';
import { ageOf, servableStale, staleFor } from './freshness.js';
import { resolveHttpFlightOptions, type HttpFlightOptions, type ResolvedHttpFlightOptions } from './options.js';
import { RequestPlanner, type FlightPlan, type Plan } from './plan.js';
import { isSharedResponse, isUnsharedOutcome } from './response.js';
import { streamFlight } from './stream-flight.js';

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

/** How much longer than its computed end a request waits for a stale stored copy to go (ms). */
const STALE_MARGIN_MS = 25;
/** How many stale stored copies a request waits out before it runs the handler itself. */
const MAX_STALE_ROUNDS = 3;

/** What the steps of one middleware instance share. */
interface Handler<Req> {
  readonly options: ResolvedHttpFlightOptions<Req>;
  readonly planner: RequestPlanner<Req>;
  /** Idempotency keys in flight on this node (`inFlight: 'conflict'`). */
  readonly inFlightHere: Set<string>;
}

/**
 * The call failed because the run it joined on this node belonged to a request already answered, which
 * refused to run the handler (a streamed follower cut short whose call was then given the next run): no
 * handler ran. A request that joined such a run in-process must not be answered as if its handler had failed.
 */
function joinedRefusedRun(error: unknown): boolean {
  return (
    error instanceof FlightExecutionError && (error.cause instanceof DetachedRequest || error.cause instanceof FlightStreamExpiredError)
  );
}

/** A resumable route's answer to a resume that cannot continue (bad id, another flight's id, a stream gone). */
function resumeFailureOf(call: FlightCall<unknown>, error: unknown): FlightHttpError | undefined {
  if (error instanceof FlightResumeInvalidError || error instanceof FlightResumeMismatchError) return error;
  // Only the resuming caller's own run says its stream is gone; a caller that joined that run asks again.
  if (call.run === undefined && error instanceof FlightExecutionError && error.cause instanceof FlightStreamExpiredError && call.resuming)
    return new FlightResumeExpiredError('the stream this Last-Event-ID names is gone', { cause: error.cause });
  return undefined;
}

/** True when the flight failed because its run or this caller's wait ran out of time. */
function isTimeout(error: unknown): boolean {
  return error instanceof FlightWaitTimeoutError || (error instanceof FlightExecutionError && error.errorType === 'TIMEOUT');
}

/** Creates the handler of one middleware instance. Options are validated here, once. */
export function createHttpFlightHandler<Req>(input: HttpFlightOptions<Req>): HttpFlightHandler<Req> {
  const options = resolveHttpFlightOptions(input);
  const handler: Handler<Req> = { options, planner: new RequestPlanner(options), inFlightHere: new Set() };
  return Object.assign((exchange: HttpExchange<Req>) => handle(handler, exchange), {
    purge: (view: HttpRequestView<Req>) => purge(handler, view),
  });
}

/** Plans the request, then runs it: no extra promise when the plan is synchronous (the common case). */
function handle<Req>(handler: Handler<Req>, exchange: HttpExchange<Req>): Promise<void> {
  try {
    const planned = handler.planner.plan(exchange);
    if (planned instanceof Promise)
      return planned.then(
        (decided) => dispatch(handler, exchange, decided),
        (error: unknown) => refuse(exchange, error),
      );
    return dispatch(handler, exchange, planned);
  } catch (error) {
    return refuse(exchange, error);
  }
}

/** Answers a request the plan refused (a `FlightHttpError`); anything else is the framework's to answer. */
async function refuse<Req>(exchange: HttpExchange<Req>, error: unknown): Promise<void> {
  if (error instanceof FlightHttpError) return exchange.reject(error);
  throw error;
}

function dispatch<Req>(handler: Handler<Req>, exchange: HttpExchange<Req>, decided: Plan): Promise<void> {
  return decided.kind === 'bypass' ? bypass(handler, exchange) : runFlight(handler, exchange, decided);
}

/** A request that is not coalesced: the handler runs as if the middleware were not there. */
async function bypass<Req>(handler: Handler<Req>, exchange: HttpExchange<Req>): Promise<void> {
  tellRole(exchange, 'bypass', handler.options.roleHeader, serverSpan(handler.options.singleFlight));
  return exchange.passthrough();
}

async function purge<Req>(handler: Handler<Req>, view: HttpRequestView<Req>): Promise<boolean> {
  const { options, planner } = handler;
  const keys: string[] = [];
  for (const method of options.methods) {
    const key = planner.coalescingKey(view, method);
    if (key !== null) keys.push(key);
  }
  const forgotten = await Promise.all(keys.map((key) => options.singleFlight.forget(options.stage, key)));
  return forgotten.includes(true);
}

/**
 * Runs the flight of one request. `rejoined`: this is the request's second flight, after the run it joined
 * on this node turned out to be one no handler could run (see `joinedRefusedRun`). `staleRounds`: how many
 * stored responses it met that were no longer fresh (see `afterStale`).
 */
async function runFlight<Req>(
  handler: Handler<Req>,
  exchange: HttpExchange<Req>,
  flight: FlightPlan,
  rejoined = false,
  staleRounds = 0,
): Promise<void> {
  const { options, inFlightHere } = handler;
  const call = new FlightCall(exchange, flight, options);
  const { idempotent } = call;
  let unsubscribe: (() => void) | undefined;

  if (flight.conflict) {
    if (inFlightHere.has(flight.key)) {
      return exchange.reject(new FlightIdempotencyConflictError('a request with this Idempotency-Key is still being processed'));
    }
    inFlightHere.add(flight.key);
    // Another node runs it: this call became a follower. Answer 409 instead of waiting.
    unsubscribe = options.singleFlight.on('follower', (event) => {
      if (event.stage === options.stage && event.key === flight.key && !call.run) {
        call.conflicted = true;
        call.detach?.abort(new Error('in flight elsewhere'));
      }
    });
  }

  try {
    if (flight.stream) {
      const stale = await streamFlight(call, flight.key, options);
      return stale ? await afterStale(handler, call, stale, staleRounds) : undefined;
    }
    const result = await options.singleFlight.execute(options.stage, flight.key, call.supplier, call);
    if (call.run) {
      const answering = call.answerOwner(call.run);
      if (answering) await answering;
      return;
    }
    const value = result.value;
    const unshared = isUnsharedOutcome(value);
    if (!unshared && !isSharedResponse(value)) throw new TypeError('the shared value is not an HTTP response');
    let role: HttpFlightRole = result.role === 'owner' || result.role === 'local' ? 'follower' : result.role;
    if (idempotent && value.fp !== flight.fingerprint) {
      return call.reject(new FlightIdempotencyKeyReusedError('this Idempotency-Key was used with a different request'), role);
    }
    if (unshared) return answerUnshared(handler, call, value.unshared);
    if (role === 'replay' || role === 'l1' || role === 'stale') {
      const stale = idempotent || role === 'stale' ? 0 : staleFor(value);
      // Past its freshness but inside its stale-while-revalidate: served stale (its refresh starts once its copy is gone).
      if (stale && handler.options.serveStale && servableStale(value)) role = 'stale';
      else if (stale) return await afterStale(handler, call, stale, staleRounds);
      const age = ageOf(value);
      if (age !== undefined) exchange.setHeader('age', String(age));
    }
    call.answered = true;
    call.tell(role);
    return exchange.replay(value);
  } catch (error) {
    return await answerFailure(handler, call, error, rejoined);
  } finally {
    call.end();
    unsubscribe?.();
    if (flight.conflict) inFlightHere.delete(flight.key);
  }
}

/** Answers a request whose flight failed (or, for the owner, whose sharing failed). */
async function answerFailure<Req>(handler: Handler<Req>, call: FlightCall<Req>, error: unknown, rejoined: boolean): Promise<void> {
  const { exchange, idempotent, flight } = call;
  const resumeFailure = resumeFailureOf(call as FlightCall<unknown>, error);
  if (resumeFailure) return call.reject(resumeFailure);
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
  if (!rejoined && !idempotent && joinedRefusedRun(error)) return runFlight(handler, exchange, flight, true);
  const unshareable = error instanceof FlightExecutionError ? unshareableOf(error) : undefined;
  if (unshareable) return answerUnshared(handler, call, unshareable, error);
  if (isTimeout(error)) {
    // The run it joined is too slow: running the same slow handler again for each caller would only add load.
    return call.reject(new FlightHttpTimeoutError('the shared request did not finish in time', { cause: error }), 'follower');
  }
  if (idempotent) {
    if (error instanceof FlightExecutionError && error.replayed) {
      // A recorded failure of a run that did take place: it is not run again.
      return call.reject(new FlightIdempotencyConflictError('the response to this Idempotency-Key cannot be replayed'), 'follower');
    }
    return call.reject(new FlightHttpUnavailableError('the idempotent request could not be coordinated; it was not run', { cause: error }));
  }
  // A safe request whose flight could not be coordinated: run it here.
  return runHere(call);
}

/**
 * A request met a stored response that may no longer be replayed (its freshness is over, its copy kept
 * only for the callers that joined its run): it waits the `waitMs` until the copy is gone (plus
 * `STALE_MARGIN_MS`: the copy was stored a round trip after its time was computed) and asks again,
 * joining the next run with every other such request. After `MAX_STALE_ROUNDS` such rounds it runs the
 * handler itself.
 */
async function afterStale<Req>(handler: Handler<Req>, call: FlightCall<Req>, waitMs: number, rounds: number): Promise<void> {
  if (rounds >= MAX_STALE_ROUNDS) return runHere(call);
  try {
    await sleep(waitMs + STALE_MARGIN_MS, undefined, { signal: call.exchange.signal });
  } catch {
    call.answered = true;
    return; // the client went away: nobody to answer
  }
  return runFlight(handler, call.exchange, call.flight, false, rounds + 1);
}

/** Answers a caller of a run whose response was not shared: with the owner's failure, or by running the handler itself. */
function answerUnshared<Req>(
  handler: Handler<Req>,
  call: FlightCall<Req>,
  outcome: UnshareableOutcome,
  cause?: unknown,
): void | Promise<void> {
  if (outcome.reason === 'status' && (call.idempotent || handler.options.onUnshareable === 'fail')) {
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
function runHere<Req>(call: FlightCall<Req>): Promise<void> | void {
  call.answered = true;
  call.tell('bypass');
  return call.exchange.passthrough();
}
