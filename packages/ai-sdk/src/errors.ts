/**
 * Errors of the middleware, and the AI SDK's own error class carried across the cluster: an `APICallError`
 * of the owner's call (a 400, a 429, a 500, a refused connection) reaches every caller as an
 * `APICallError`, with its status, URL, response body and `isRetryable`, on every node.
 */
import { APICallError } from '@ai-sdk/provider';
import { FlightError, FlightExecutionError, FlightStreamExpiredError } from '@flight/core';

const HTTP_CODE = /^E_AI_SDK_HTTP_\d{3}$/;
const API_CALL_CODE = 'E_AI_SDK_API_CALL';
const CUT_CODE = 'E_FLIGHT_AI_SDK_STREAM_CUT';
/** Where an `APICallError`'s fields start in a failure record's message (which holds at most 1,000 characters). */
const WIRE_MARK = '{"apiCallError":';
const MAX_BODY = 400;

/** A model's stream that ended without its `finish` part: a provider failure, never stored as a whole answer. */
export class FlightAiSdkStreamCutError extends FlightError {
  static override readonly code = CUT_CODE;
}

/** The owner's error, as the flight records it: a code with the status, the error's fields in the message. */
class UpstreamFailure extends Error {
  constructor(
    readonly code: string,
    readonly status: number | undefined,
    readonly failureType: 'PROVIDER' | undefined,
    message: string,
    readonly sdkError: unknown,
  ) {
    super(message, { cause: sdkError });
  }
}

interface WireApiCallError {
  message: string;
  url: string;
  statusCode?: number;
  responseBody?: string;
  isRetryable: boolean;
}

const cut = (text: string | undefined, max: number) => (text === undefined || text.length <= max ? text : `${text.slice(0, max)}…`);

/**
 * What the owner's supplier throws for the model's error: an `APICallError` classified by its status (429
 * OVERLOAD, 5xx PROVIDER, 4xx VALIDATION; none: a connection failure, PROVIDER), anything else unchanged.
 */
export function upstreamFailure(error: unknown): unknown {
  if (!APICallError.isInstance(error)) return error;
  const wire: WireApiCallError = {
    message: cut(error.message, 200)!,
    url: cut(error.url, 200)!,
    isRetryable: error.isRetryable,
    ...(error.statusCode === undefined ? {} : { statusCode: error.statusCode }),
    ...(error.responseBody === undefined ? {} : { responseBody: cut(error.responseBody, MAX_BODY) }),
  };
  const status = error.statusCode;
  const code = status === undefined ? API_CALL_CODE : `E_AI_SDK_HTTP_${status}`;
  return new UpstreamFailure(code, status, status === undefined ? 'PROVIDER' : undefined, JSON.stringify({ apiCallError: wire }), error);
}

/** What the owner's supplier throws when the model's stream ended without its `finish` part. */
export function streamCut(parts: number): UpstreamFailure {
  const message = `the model's stream ended after ${parts} parts without its finish part (connection cut)`;
  return new UpstreamFailure(CUT_CODE, undefined, 'PROVIDER', message, new FlightAiSdkStreamCutError(message, { context: { parts } }));
}

/** The owner's own error in a failure's causes (on the owner's node). */
function sdkErrorIn(error: unknown): unknown {
  for (let e: any = error, depth = 0; e && depth < 4; e = e.cause, depth++) if (e instanceof UpstreamFailure) return e.sdkError;
  return undefined;
}

function wireIn(message: string): WireApiCallError | undefined {
  const at = message.indexOf(WIRE_MARK);
  if (at < 0) return undefined;
  try {
    return (JSON.parse(message.slice(at)) as { apiCallError: WireApiCallError }).apiCallError;
  } catch {
    return undefined;
  }
}

/**
 * The error a caller receives: the owner's error itself where this node has it, an `APICallError` rebuilt
 * from the flight's failure record elsewhere, any other error unchanged.
 */
export function callerError(error: unknown, requestBodyValues?: unknown): unknown {
  const own = sdkErrorIn(error);
  if (own) return own;
  if (!(error instanceof FlightExecutionError)) return error;
  if (error.cause instanceof FlightStreamExpiredError) return error.cause;
  if (HTTP_CODE.test(error.errorCode) || error.errorCode === API_CALL_CODE) {
    const wire = wireIn(error.message);
    if (wire) {
      return new APICallError({
        message: wire.message,
        url: wire.url,
        requestBodyValues,
        statusCode: wire.statusCode,
        responseBody: wire.responseBody,
        isRetryable: wire.isRetryable,
        cause: error,
      });
    }
  }
  if (error.errorCode === CUT_CODE) return new FlightAiSdkStreamCutError(error.message, { cause: error });
  return error;
}
