/**
 * Errors of the OpenAI wrapper, and the SDK's own error classes carried across the cluster: a provider
 * error of the owner's call reaches every caller as the SDK class it was (`BadRequestError`,
 * `RateLimitError`, …), with its status and error body, on every node.
 */
import { FlightError, FlightExecutionError, FlightStreamExpiredError } from '@flight/core';
import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';

/** A coalesced call was asked for what only the caller's own HTTP exchange has (`withResponse`, `asResponse`). */
export class FlightOpenAINoResponseError extends FlightError {
  static override readonly code = 'E_FLIGHT_OPENAI_NO_RESPONSE';
}

/** Codes of the owner's failures, as the flight records them (a failure record keeps a code and a message). */
const HTTP_CODE = /^E_OPENAI_HTTP_(\d{3})$/;
const TIMEOUT_CODE = 'E_OPENAI_TIMEOUT';
const CONNECTION_CODE = 'E_OPENAI_CONNECTION';
const CUT_CODE = 'E_FLIGHT_OPENAI_STREAM_CUT';

/** A model's stream that stopped before the API's last event (see stream-end.ts): a provider failure, never stored. */
export class FlightOpenAIStreamCutError extends FlightError {
  static override readonly code = CUT_CODE;
}

/** The owner's SDK error, as the flight records it: a code with the status, the error body in the message. */
class UpstreamFailure extends Error {
  constructor(
    readonly code: string,
    readonly status: number | undefined,
    readonly failureType: 'TIMEOUT' | 'PROVIDER' | undefined,
    message: string,
    readonly sdkError: unknown,
  ) {
    super(message, { cause: sdkError });
  }
}

/** What the owner's supplier throws when the model's stream stopped before its end. */
export function streamCut(api: string, events: number): UpstreamFailure {
  const message = `the model's ${api} stream stopped after ${events} events without its last one (connection cut)`;
  return new UpstreamFailure(
    CUT_CODE,
    undefined,
    'PROVIDER',
    message,
    new FlightOpenAIStreamCutError(message, { context: { api, events } }),
  );
}

/**
 * What the owner's supplier throws when reading the model's stream failed with something other than an
 * SDK error (the connection dropped: fetch's `TypeError: terminated`): a connection failure, retryable.
 */
export function streamBroken(error: unknown): unknown {
  if (error instanceof APIError) return upstreamFailure(error);
  const message = `the model's stream broke: ${(error as Error)?.message ?? String(error)}`;
  return new UpstreamFailure(CONNECTION_CODE, undefined, 'PROVIDER', message, new APIConnectionError({ message, cause: error as Error }));
}

/** What the owner's supplier throws for an SDK error: classified by status (429 OVERLOAD, 5xx PROVIDER, 4xx VALIDATION). */
export function upstreamFailure(error: unknown): unknown {
  if (error instanceof APIConnectionTimeoutError) return new UpstreamFailure(TIMEOUT_CODE, undefined, 'TIMEOUT', error.message, error);
  if (error instanceof APIError && typeof error.status === 'number') {
    const body = JSON.stringify({ status: error.status, error: error.error ?? null });
    return new UpstreamFailure(`E_OPENAI_HTTP_${error.status}`, error.status, undefined, body, error);
  }
  if (error instanceof APIConnectionError) return new UpstreamFailure(CONNECTION_CODE, undefined, 'PROVIDER', error.message, error);
  return error;
}

/** The owner's SDK error in a failure's causes (on the owner's node). */
function sdkErrorIn(error: unknown): unknown {
  for (let e: any = error, depth = 0; e && depth < 4; e = e.cause, depth++) if (e instanceof UpstreamFailure) return e.sdkError;
  return undefined;
}

/** The error body a replayed failure carries after its code (see `upstreamFailure`). */
function bodyIn(message: string): { status?: number; error?: unknown } | undefined {
  const at = message.indexOf('{"status":');
  if (at < 0) return undefined;
  try {
    return JSON.parse(message.slice(at));
  } catch {
    return undefined; // cut short by the record's message limit
  }
}

/**
 * The error a caller of a coalesced call receives: the owner's SDK error itself where this node has it,
 * the same SDK class rebuilt from the flight's failure record elsewhere, any other error unchanged.
 */
export function callerError(error: unknown): unknown {
  const own = sdkErrorIn(error);
  if (own) return own;
  if (!(error instanceof FlightExecutionError)) return error;
  // A resume that found no run to continue: the core's own error, as a caller of `executeStream` gets it.
  if (error.cause instanceof FlightStreamExpiredError) return error.cause;
  const http = HTTP_CODE.exec(error.errorCode);
  if (http) {
    const status = Number(http[1]);
    const body = bodyIn(error.message);
    return APIError.generate(status, body ? { error: body.error } : undefined, body ? undefined : error.message, new Headers());
  }
  if (error.errorCode === TIMEOUT_CODE) return new APIConnectionTimeoutError({ message: error.message });
  if (error.errorCode === CONNECTION_CODE) return new APIConnectionError({ message: error.message, cause: error });
  if (error.errorCode === CUT_CODE) return new FlightOpenAIStreamCutError(error.message, { cause: error });
  return error;
}
