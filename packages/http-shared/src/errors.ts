/**
 * The HTTP errors the middleware answers with, one class each, with a stable `code` and the HTTP
 * `status` it is sent with. They are rendered as `application/problem+json` (RFC 9457) bodies that
 * carry the code, so clients can branch on it.
 */
import { FlightError, type FlightErrorContext } from '@flight/core';

/** Base class of every error answered by the middleware itself. */
export class FlightHttpError extends FlightError {
  static override readonly code: string = 'E_FLIGHT_HTTP';
  /** The HTTP status the error is answered with. */
  static readonly status: number = 500;
  readonly status: number;

  constructor(message: string, options: { cause?: unknown; context?: FlightErrorContext; status?: number } = {}) {
    super(message, options);
    this.status = options.status ?? (new.target as typeof FlightHttpError).status;
  }
}

/** 413: the request body is larger than `maxRequestBodyBytes` (declared or counted). */
export class FlightBodyTooLargeError extends FlightHttpError {
  static override readonly code = 'E_FLIGHT_HTTP_BODY_TOO_LARGE';
  static override readonly status = 413;
}

/** 400: the route requires an `Idempotency-Key` and the request has none. */
export class FlightIdempotencyKeyMissingError extends FlightHttpError {
  static override readonly code = 'E_FLIGHT_HTTP_IDEMPOTENCY_KEY_MISSING';
  static override readonly status = 400;
}

/** 400: the `Idempotency-Key` is empty, too long, repeated, or not a valid string. */
export class FlightIdempotencyKeyInvalidError extends FlightHttpError {
  static override readonly code = 'E_FLIGHT_HTTP_IDEMPOTENCY_KEY_INVALID';
  static override readonly status = 400;
}

/** 422: the `Idempotency-Key` was already used with a different method, path or body. */
export class FlightIdempotencyKeyReusedError extends FlightHttpError {
  static override readonly code = 'E_FLIGHT_HTTP_IDEMPOTENCY_KEY_REUSED';
  static override readonly status = 422;
}

/** 409: a request with the same `Idempotency-Key` is still being processed (`inFlight: 'conflict'`). */
export class FlightIdempotencyConflictError extends FlightHttpError {
  static override readonly code = 'E_FLIGHT_HTTP_IDEMPOTENCY_IN_FLIGHT';
  static override readonly status = 409;
}

/**
 * The shared request failed and this caller receives the owner's failure instead of running the
 * handler itself (`onUnshareable: 'fail'`, and always in idempotency mode). Sent with the owner's status.
 */
export class FlightSharedFailureError extends FlightHttpError {
  static override readonly code = 'E_FLIGHT_HTTP_SHARED_FAILURE';
  static override readonly status = 502;
}

/**
 * 503: an idempotent request could not be coordinated cluster-wide (coordinator unreachable or in its
 * fallback cooldown, wait timeout…). It was **not run**; the client may retry after `retryAfterSeconds`.
 */
export class FlightHttpUnavailableError extends FlightHttpError {
  static override readonly code = 'E_FLIGHT_HTTP_UNAVAILABLE';
  static override readonly status = 503;
  /** Sent as `Retry-After`. */
  readonly retryAfterSeconds: number = 1;
}

/**
 * 504: this caller joined a run of the handler that did not finish within the stage's guard timeout (or
 * waited past `waitTimeoutMs`). The handler is not run again for it; the run's own client still gets the
 * handler's response when it comes.
 */
export class FlightHttpTimeoutError extends FlightHttpError {
  static override readonly code = 'E_FLIGHT_HTTP_TIMEOUT';
  static override readonly status = 504;
}

/**
 * An `Idempotency-Key` request carries credentials (an `Authorization`, a `Cookie`…) but the middleware was
 * given no `identity` for it. Keyed by the raw credentials, a client that refreshes its token or whose
 * cookie changes would run the request again under the same key; so it is not run at all (500), and the
 * message says how to give the identity (`key: (req) => ({ identity })`, or `credentialHeaders: []` when
 * the key alone identifies the client). A configuration error, answered at first use because only a
 * request shows whether credentials come with it.
 */
export class FlightIdempotencyIdentityRequiredError extends FlightHttpError {
  static override readonly code = 'E_FLIGHT_HTTP_IDEMPOTENCY_IDENTITY_REQUIRED';
  static override readonly status = 500;
}

/** 400: a resumable route got a `Last-Event-ID` (or its query parameter) that is not one of its event ids. */
export class FlightResumeInvalidError extends FlightHttpError {
  static override readonly code = 'E_FLIGHT_HTTP_RESUME_INVALID';
  static override readonly status = 400;
}

/** 409: the last event id names another flight's stream (another user, another URL): nothing is resumed. */
export class FlightResumeMismatchError extends FlightHttpError {
  static override readonly code = 'E_FLIGHT_HTTP_RESUME_MISMATCH';
  static override readonly status = 409;
}

/**
 * 410: the stream the last event id names is gone (its run ended and its events are no longer kept, or
 * were forgotten), and the route resumes with `expired: 'gone'`: the handler was not run again.
 */
export class FlightResumeExpiredError extends FlightHttpError {
  static override readonly code = 'E_FLIGHT_HTTP_RESUME_EXPIRED';
  static override readonly status = 410;
}

/** Every HTTP error class by its code. */
export const FlightHttpErrorCodes = {
  E_FLIGHT_HTTP: FlightHttpError,
  E_FLIGHT_HTTP_BODY_TOO_LARGE: FlightBodyTooLargeError,
  E_FLIGHT_HTTP_IDEMPOTENCY_KEY_MISSING: FlightIdempotencyKeyMissingError,
  E_FLIGHT_HTTP_IDEMPOTENCY_KEY_INVALID: FlightIdempotencyKeyInvalidError,
  E_FLIGHT_HTTP_IDEMPOTENCY_KEY_REUSED: FlightIdempotencyKeyReusedError,
  E_FLIGHT_HTTP_IDEMPOTENCY_IN_FLIGHT: FlightIdempotencyConflictError,
  E_FLIGHT_HTTP_IDEMPOTENCY_IDENTITY_REQUIRED: FlightIdempotencyIdentityRequiredError,
  E_FLIGHT_HTTP_SHARED_FAILURE: FlightSharedFailureError,
  E_FLIGHT_HTTP_UNAVAILABLE: FlightHttpUnavailableError,
  E_FLIGHT_HTTP_TIMEOUT: FlightHttpTimeoutError,
  E_FLIGHT_HTTP_RESUME_INVALID: FlightResumeInvalidError,
  E_FLIGHT_HTTP_RESUME_MISMATCH: FlightResumeMismatchError,
  E_FLIGHT_HTTP_RESUME_EXPIRED: FlightResumeExpiredError,
} as const;

/** Response headers an error is answered with besides its body (`Retry-After` on a 503). */
export function errorHeaders(error: FlightHttpError): [string, string][] {
  return error instanceof FlightHttpUnavailableError ? [['retry-after', String(error.retryAfterSeconds)]] : [];
}

/** The `application/problem+json` body of an error. */
export function problemBody(error: FlightHttpError): Buffer {
  return Buffer.from(
    JSON.stringify({
      type: 'about:blank',
      title: error.message,
      status: error.status,
      code: error.code,
      ...(error instanceof FlightHttpUnavailableError || error instanceof FlightIdempotencyIdentityRequiredError ? { notRun: true } : {}),
    }),
    'utf8',
  );
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8';

export type UnshareableReason = 'status' | 'private' | 'vary' | 'too-large' | 'body' | 'handler-error' | 'timeout';

/** What callers learn of an unshareable outcome: the owner's status, a run past its time, or another reason. */
export type UnshareableOutcome = { reason: 'status'; status: number } | { reason: 'timeout' } | { reason: 'other' };

/**
 * Internal: the owner's response must not be shared, and why. A coalesced (safe) request's supplier throws
 * it, in a flight run with `keepFailures: false`: the callers that joined the run on this node receive it,
 * typed, as the `cause` of their `FlightExecutionError`; the failure is recorded retryable, so followers on
 * other nodes and later callers start a new run instead of having it replayed. (An idempotent request's
 * supplier returns the outcome as a value instead, `UnsharedOutcome`: its handler ran, so its outcome is
 * recorded for every later caller.) Never reaches users.
 */
/** The code of `UnshareableResponse`, which a kept failure carries to other nodes. */
const UNSHAREABLE_CODE = 'E_FLIGHT_HTTP_UNSHAREABLE';

export class UnshareableResponse extends Error {
  readonly code = UNSHAREABLE_CODE;
  /** What callers learn of it. */
  readonly outcome: UnshareableOutcome;

  constructor(
    readonly reason: UnshareableReason,
    /** The owner's status (not named `status`: it is no HTTP error of this request, nor a failure type). */
    readonly ownerStatus: number | undefined,
  ) {
    super(`response not shared (${reason}${ownerStatus === undefined ? '' : ` ${ownerStatus}`})`);
    this.name = 'UnshareableResponse';
    this.outcome =
      reason === 'status' && ownerStatus !== undefined
        ? { reason: 'status', status: ownerStatus }
        : reason === 'timeout'
          ? { reason: 'timeout' }
          : { reason: 'other' };
  }
}

/** Why a flight failed for unshareability (the typed cause its callers on the owner's node receive), or `undefined`. */
export function unshareableOf(error: { cause?: unknown; errorCode?: string; message?: string }): UnshareableOutcome | undefined {
  if (error.cause instanceof UnshareableResponse) return error.cause.outcome;
  // Kept by another node's run (`holdUnshareableMs`): the stored failure's code and message say it.
  if (error.errorCode !== UNSHAREABLE_CODE) return undefined;
  const [, reason, status] = /response not shared \(([a-z-]+)(?: (\d{3}))?\)/.exec(error.message ?? '') ?? [];
  if (reason === undefined) return undefined;
  return new UnshareableResponse(reason as UnshareableReason, status === undefined ? undefined : Number(status)).outcome;
}
