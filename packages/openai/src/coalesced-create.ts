/**
 * The `create` of a coalesced API: the same call made once across the cluster. A call that may share
 * (see sampling.ts, request-key.ts) runs as a flight — `execute` for an answer, `executeStream` for
 * `stream: true`, so every caller gets the SDK's own `Stream` with the owner's events live — and any
 * other call goes to the SDK as it is.
 */
import type { ExecuteOptions, FlightResult, StreamJson, StreamPosition } from '@flight/core';
import { Stream } from 'openai/streaming';
import type { ApiSpec } from './apis.js';
import { callOptionsOf, notResumable, type FlightCallOptions } from './call-options.js';
import { callerError, FlightOpenAINoResponseError, streamBroken, streamCut, upstreamFailure } from './errors.js';
import { infoOf, perCaller, positions, tag } from './flight-info.js';
import { reportCall, reportUnshared, type CallReport } from './genai-telemetry.js';
import type { ResolvedOpenAIFlightOptions } from './options.js';
import { callTarget, canonicalBody, requestKey } from './request-key.js';
import { samplesFreely } from './sampling.js';
import { StreamEnd } from './stream-end.js';
import { usageOf, usageOfEvent, type TokenUsage } from './usage.js';

/** The SDK's `create`: `(body, options) => APIPromise`. */
type Create = (this: object, body: unknown, options?: RequestOptions) => PromiseLike<unknown>;
type RequestOptions = { signal?: AbortSignal | null | undefined } & Record<string, unknown>;
type Body = Record<string, unknown>;

export interface CreateContext {
  spec: ApiSpec;
  options: ResolvedOpenAIFlightOptions;
  /** The client's digest (request-key.ts). */
  client: string;
  /** The resource the SDK's `create` belongs to, and that `create`. */
  resource: object;
  original: Create;
}

/**
 * The flight key of a call, or undefined when the call must not share (it samples freely, or its body or
 * per-call target is not plain JSON).
 */
function keyOf(context: CreateContext, body: Body, request: RequestOptions | undefined): string | undefined {
  const { spec, options, client } = context;
  if (spec.samples && options.share === 'deterministic-only' && samplesFreely(body)) return undefined;
  const canonical = canonicalBody(body);
  const target = callTarget(request);
  if (canonical === undefined || target === undefined) return undefined;
  return requestKey(options.stage, spec.api, client, options.scope, canonical, target);
}

/** The call's promise, with the `APIPromise` methods a coalesced call cannot honour: they reject with a typed error. */
function coalesced<T>(work: Promise<T>): Promise<T> {
  const noResponse = () => {
    work.catch(() => undefined);
    return Promise.reject(
      new FlightOpenAINoResponseError(
        'a coalesced call has no HTTP response of its own: call the unwrapped client for withResponse() or asResponse()',
      ),
    );
  };
  return Object.assign(work, { withResponse: noResponse, asResponse: noResponse });
}

/** The owner's call: the SDK's, with the run's signal (a lost lease, a timeout) in place of the caller's. */
function ownerCall(context: CreateContext, body: Body, request: RequestOptions | undefined, signal: AbortSignal) {
  return Promise.resolve(context.original.call(context.resource, body, { ...request, signal })).catch((error: unknown) => {
    throw upstreamFailure(error);
  });
}

/** The caller's error (the SDK's class), reported on its span. */
function failWith(report: CallReport, error: unknown): unknown {
  const failure = callerError(error);
  report.failed(failure);
  return failure;
}

/** The core's options of one caller: its signal and session, and whether a run nobody waits for stops. */
function executeOptions(context: CreateContext, signal: AbortSignal | null | undefined, call: FlightCallOptions): ExecuteOptions {
  const options: ExecuteOptions = {};
  if (context.options.cancelAbandoned) options.cancelWhenAbandoned = true;
  if (signal) options.signal = signal;
  if (call.sessionId !== undefined) options.sessionId = call.sessionId;
  return options;
}

async function answer(context: CreateContext, key: string, body: Body, request: RequestOptions | undefined, call: FlightCallOptions) {
  const report = reportCall(context.spec, context.options.stage, body);
  let spent = false;
  let result: FlightResult<unknown>;
  try {
    result = await report.within(() =>
      context.options.flights.execute(
        context.options.stage,
        key,
        (run) => {
          spent = true;
          return ownerCall(context, body, request, run.signal);
        },
        // The owner's caller has its answer as soon as the model answers; it is stored for the others after.
        { ...executeOptions(context, request?.signal, call), storeInBackground: true },
      ),
    );
  } catch (error) {
    throw failWith(report, error);
  }
  report.answered({ role: result.role, spent }, result.value as Body, usageOf(result.value));
  return perCaller(result.value as object, infoOf(result, spent));
}

/** What a stream's events say about its answer: the model and id (a chat chunk's, a response's), and the usage. */
class StreamDescription {
  answer: Body | undefined;
  usage: TokenUsage | undefined;

  note(event: StreamJson): void {
    const e = event as Body;
    const response = e?.response as Body | undefined;
    this.answer ??= typeof e?.model === 'string' ? e : typeof response?.model === 'string' ? response : undefined;
    this.usage = usageOfEvent(event) ?? this.usage;
  }
}

/**
 * The owner's streamed call: the model's events as they come. A stream that stops before the API's last
 * event (a connection closed cleanly mid-answer) fails, so a cut answer is never kept as the whole one.
 */
async function* ownerEvents(context: CreateContext, body: Body, request: RequestOptions | undefined, signal: AbortSignal) {
  const events = (await ownerCall(context, body, request, signal)) as AsyncIterable<StreamJson>;
  const end = new StreamEnd(context.spec.api);
  let count = 0;
  try {
    for await (const event of events) {
      end.note(event);
      count++;
      yield event;
    }
  } catch (error) {
    // The run's own abort (a lost lease, a timeout) is the core's to report.
    throw signal.aborted ? error : streamBroken(error);
  }
  if (!end.complete && !signal.aborted) throw streamCut(context.spec.api, count);
}

/**
 * A streamed call: resolves once the first event (or the call's error) is here, as the SDK's does once
 * the response starts, with the SDK's `Stream` of the run's events. Aborting it (`stream.controller`) or
 * the caller's signal detaches this caller only. `positionOf(stream)` follows the events read.
 */
async function streamed(context: CreateContext, key: string, body: Body, request: RequestOptions | undefined, call: FlightCallOptions) {
  const report = reportCall(context.spec, context.options.stage, body);
  let spent = false;
  const controller = new AbortController();
  const callerSignal = request?.signal;
  // The caller's signal may outlive this call (a connection's): its listener goes when the stream ends.
  const detach = () => controller.abort(callerSignal?.reason);
  if (callerSignal?.aborted) detach();
  else callerSignal?.addEventListener('abort', detach, { once: true });
  const release = () => callerSignal?.removeEventListener('abort', detach);
  const options = { ...executeOptions(context, controller.signal, call), ...(call.after ? { after: call.after } : {}) };
  const flight = context.options.flights.executeStream<StreamJson>(
    context.options.stage,
    key,
    (run) => {
      spent = true;
      return ownerEvents(context, body, request, run.signal);
    },
    options,
  );
  const events = flight[Symbol.asyncIterator]();
  let first: IteratorResult<StreamJson>;
  try {
    first = await report.within(() => events.next());
  } catch (error) {
    release();
    throw failWith(report, error);
  }
  const description = new StreamDescription();
  let index = call.after?.index ?? 0;
  let ended = false;
  async function* rest(): AsyncGenerator<unknown> {
    try {
      for (let next = first; !next.done; next = await events.next()) {
        description.note(next.value);
        positions.set(stream, { epoch: flight.epoch, index: ++index } satisfies StreamPosition);
        yield next.value;
      }
      ended = true;
      const result = await flight.result();
      tag(stream, infoOf(result, spent));
      report.answered({ role: result.role, spent }, description.answer, description.usage);
    } catch (error) {
      throw failWith(report, error);
    } finally {
      release();
      report.left();
      // A stream dropped before its end: this caller left the run (which stops if nobody else waits).
      if (!ended) controller.abort();
      await events.return?.();
    }
  }
  const stream = new Stream(() => rest(), controller);
  return stream;
}

/** The contexts of the wrapped resources (`client.chat.completions` of a wrapped client), for `flightKeyOf`. */
const contexts = new WeakMap<object, CreateContext>();

export function registerResource(proxy: object, context: CreateContext): void {
  contexts.set(proxy, context);
}

/**
 * The flight a call with `body` makes through a wrapped resource (`client.chat.completions`,
 * `client.responses`, `client.embeddings` of a client `withFlights` returned) with `body` and the call's
 * request options (`request`: the account headers, `query`, `path` and `defaultBaseURL` split keys): its stage and key — to
 * `forget` a kept answer, or to follow it in your own logs. Undefined when the call is not coalesced (the
 * sampling policy, a body that is not plain JSON) or `resource` is not a wrapped one.
 */
export function flightKeyOf(resource: object, body: object, request?: object): { stage: string; key: string } | undefined {
  const context = contexts.get(resource);
  const key = context && keyOf(context, body as Body, request as RequestOptions | undefined);
  return key === undefined ? undefined : { stage: context!.options.stage, key };
}

/** The coalescing `create` of one resource of a wrapped client. */
export function coalescedCreate(context: CreateContext): Create {
  const { stage } = context.options;
  return function create(body, request) {
    if (typeof body !== 'object' || body === null) return context.original.call(context.resource, body, request);
    const streams = context.spec.streams && (body as Body).stream === true;
    let call: FlightCallOptions;
    try {
      call = callOptionsOf(request, streams);
    } catch (error) {
      return coalesced(Promise.reject(error));
    }
    const key = keyOf(context, body as Body, request);
    if (key === undefined) {
      if (call.after) return coalesced(Promise.reject(notResumable()));
      reportUnshared(context.spec, stage, body as Body);
      return context.original.call(context.resource, body, request);
    }
    if (streams) return coalesced(streamed(context, key, body as Body, request, call));
    return coalesced(answer(context, key, body as Body, request, call));
  };
}
