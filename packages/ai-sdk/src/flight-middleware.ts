/**
 * The language-model middleware: `wrapLanguageModel({ model, middleware: flightMiddleware({ flights }) })`.
 * A call that may share (see sampling.ts, call-key.ts) runs as a flight — `execute` for `generateText`
 * and friends, `executeStream` for `streamText`, so every caller on every node reads the owner's parts as
 * they come — and any other call goes to the model as it is.
 */
import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4GenerateResult,
  LanguageModelV4Middleware,
  LanguageModelV4StreamPart,
  LanguageModelV4StreamResult,
} from '@ai-sdk/provider';
import type { ExecuteOptions, StreamJson } from '@flight/core';
import { accountOf, callKey, type CallKind } from './call-key.js';
import { callerError, streamCut, upstreamFailure } from './errors.js';
import { infoOf, withFlightInfo } from './flight-info.js';
import { resolveOptions, type FlightMiddlewareOptions, type ResolvedFlightMiddlewareOptions } from './options.js';
import { samplesFreely } from './sampling.js';
import { recordCall, type CallLabels } from './usage-metrics.js';
import { fromWireJson, toWireJson } from './wire-json.js';

interface Call {
  options: ResolvedFlightMiddlewareOptions;
  model: LanguageModelV4;
  params: LanguageModelV4CallOptions;
  labels: CallLabels;
}

/** The flight key of a call, or undefined when it must not share (it samples freely, its options are not plain data). */
async function keyOf(call: Call, kind: CallKind): Promise<string | undefined> {
  const { options, model, params } = call;
  if (options.share === 'deterministic-only' && samplesFreely(params)) return undefined;
  return callKey(options.stage, kind, model, await accountOf(model), options.scope, params);
}

/** The core's options of one caller: its signal (it detaches only this caller), and whether a run nobody waits for stops. */
function executeOptions(call: Call, signal: AbortSignal | undefined): ExecuteOptions {
  const options: ExecuteOptions = {};
  if (call.options.cancelAbandoned) options.cancelWhenAbandoned = true;
  if (signal) options.signal = signal;
  return options;
}

/** Plain JSON of a value the model gave, for the flight's record. */
function wire(value: unknown): StreamJson {
  const json = toWireJson(value);
  if (json === undefined) throw new TypeError('the model answered with a value that is not plain data');
  return json;
}

async function generate(call: Call, doGenerate: () => PromiseLike<LanguageModelV4GenerateResult>) {
  const key = await keyOf(call, 'generate');
  if (key === undefined) {
    const result = await doGenerate();
    recordCall(call.labels, 'unshared', true, result.usage);
    return result;
  }
  const { options, model, params } = call;
  let spent = false;
  let result;
  try {
    result = await options.flights.execute(
      options.stage,
      key,
      async (run) => {
        spent = true;
        // The run's signal (a lost lease, a timeout, every caller gone) in place of the owner caller's own.
        const answer = await Promise.resolve(model.doGenerate({ ...params, abortSignal: run.signal })).catch((error: unknown) => {
          throw upstreamFailure(error);
        });
        return wire(answer);
      },
      { ...executeOptions(call, params.abortSignal), storeInBackground: true },
    );
  } catch (error) {
    throw callerError(error, params);
  }
  const answer = fromWireJson(result.value) as LanguageModelV4GenerateResult;
  recordCall(call.labels, result.role, spent, answer.usage);
  return { ...answer, providerMetadata: withFlightInfo(answer.providerMetadata, infoOf(result, spent)) } as LanguageModelV4GenerateResult;
}

/**
 * The owner's streamed call: first what the call said about its request and response, then the model's
 * parts as they come. An `error` part fails the run (the answer is not whole); so does a stream that ends
 * without its `finish` part.
 */
async function* ownerParts(call: Call, signal: AbortSignal): AsyncGenerator<StreamJson> {
  const { model, params } = call;
  const result = await Promise.resolve(model.doStream({ ...params, abortSignal: signal })).catch((error: unknown) => {
    throw upstreamFailure(error);
  });
  yield wire({ request: result.request, response: result.response });
  const reader = result.stream.getReader();
  let parts = 0;
  let finished = false;
  try {
    for (let next = await reader.read(); !next.done; next = await reader.read()) {
      const part = next.value;
      if (part.type === 'error') throw upstreamFailure(part.error);
      if (part.type === 'finish') finished = true;
      parts++;
      yield wire(part);
    }
  } finally {
    reader.releaseLock();
  }
  if (!finished && !signal.aborted) throw streamCut(parts);
}

/**
 * A streamed call: resolves once the owner's call started (or failed, with the model's error), with the
 * run's parts as a `ReadableStream`. Cancelling it, or the caller's `abortSignal`, detaches this caller only.
 * A run that fails after it started ends the stream with an `error` part, as a provider's own stream does.
 */
async function stream(call: Call, doStream: () => PromiseLike<LanguageModelV4StreamResult>): Promise<LanguageModelV4StreamResult> {
  const key = await keyOf(call, 'stream');
  if (key === undefined) {
    recordCall(call.labels, 'unshared', true, undefined);
    return doStream();
  }
  const { options, params } = call;
  let spent = false;
  const controller = new AbortController();
  const callerSignal = params.abortSignal;
  const detach = () => controller.abort(callerSignal?.reason);
  if (callerSignal?.aborted) detach();
  else callerSignal?.addEventListener('abort', detach, { once: true });
  const release = () => callerSignal?.removeEventListener('abort', detach);
  const flight = options.flights.executeStream<StreamJson>(
    options.stage,
    key,
    (run) => {
      spent = true;
      return ownerParts(call, run.signal);
    },
    executeOptions(call, controller.signal),
  );
  const parts = flight[Symbol.asyncIterator]();
  let head: IteratorResult<StreamJson>;
  try {
    head = await parts.next();
  } catch (error) {
    release();
    throw callerError(error, params);
  }
  const meta = (head.done ? {} : fromWireJson(head.value)) as Pick<LanguageModelV4StreamResult, 'request' | 'response'>;
  let finish: Extract<LanguageModelV4StreamPart, { type: 'finish' }> | undefined;
  const end = async (sink: ReadableStreamDefaultController<LanguageModelV4StreamPart>) => {
    release();
    const result = await flight.result();
    if (finish) sink.enqueue({ ...finish, providerMetadata: withFlightInfo(finish.providerMetadata, infoOf(result, spent)) });
    recordCall(call.labels, result.role, spent, finish?.usage);
    sink.close();
  };
  const body = new ReadableStream<LanguageModelV4StreamPart>({
    async pull(sink) {
      try {
        const next = await parts.next();
        if (next.done) return await end(sink);
        const part = fromWireJson(next.value) as LanguageModelV4StreamPart;
        // The finish part gets this caller's flight info once the run's outcome is known (the end of its parts).
        if (finish) sink.enqueue(finish);
        finish = undefined;
        if (part.type === 'finish') finish = part;
        else sink.enqueue(part);
      } catch (error) {
        release();
        sink.enqueue({ type: 'error', error: callerError(error, params) });
        sink.close();
      }
    },
    cancel() {
      release();
      controller.abort();
      // Not awaited: a generator's return waits for its pending read, which the abort ends.
      void parts.return?.().catch(() => undefined);
    },
  });
  return { stream: body, ...meta };
}

/**
 * An AI SDK language-model middleware that makes identical calls once across the cluster: use it with
 * `wrapLanguageModel({ model, middleware: flightMiddleware({ flights }) })` (the `ai` package).
 */
export function flightMiddleware(input: FlightMiddlewareOptions): LanguageModelV4Middleware {
  const options = resolveOptions(input);
  const callOf = (model: LanguageModelV4, params: LanguageModelV4CallOptions): Call => ({
    options,
    model,
    params,
    labels: { provider: model.provider, model: model.modelId, stage: options.stage },
  });
  return {
    specificationVersion: 'v4',
    wrapGenerate: ({ doGenerate, params, model }) => generate(callOf(model, params), doGenerate),
    wrapStream: ({ doStream, params, model }) => stream(callOf(model, params), doStream),
  };
}
