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

/** 503: an idempotent request could not be coordinated (coordinator down, wait timeout…); it was not run. */
export class FlightHttpUnavailableError extends FlightHttpError {
  static override readonly code = 'E_FLIGHT_HTTP_UNAVAILABLE';
  static override readonly status = 503;
}

/** Every HTTP error class by its code. */
export const FlightHttpErrorCodes = {
  E_FLIGHT_HTTP: FlightHttpError,
  E_FLIGHT_HTTP_BODY_TOO_LARGE: FlightBodyTooLargeError,
  E_FLIGHT_HTTP_IDEMPOTENCY_KEY_MISSING: FlightIdempotencyKeyMissingError,
  E_FLIGHT_HTTP_IDEMPOTENCY_KEY_INVALID: FlightIdempotencyKeyInvalidError,
  E_FLIGHT_HTTP_IDEMPOTENCY_KEY_REUSED: FlightIdempotencyKeyReusedError,
  E_FLIGHT_HTTP_IDEMPOTENCY_IN_FLIGHT: FlightIdempotencyConflictError,
  E_FLIGHT_HTTP_SHARED_FAILURE: FlightSharedFailureError,
  E_FLIGHT_HTTP_UNAVAILABLE: FlightHttpUnavailableError,
} as const;

/** The `application/problem+json` body of an error. */
export function problemBody(error: FlightHttpError): Buffer {
  return Buffer.from(
    JSON.stringify({ type: 'about:blank', title: error.message, status: error.status, code: error.code }),
    'utf8',
  );
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8';

/**
 * Internal marker thrown by the supplier when the owner's response must not be shared. It is stored
 * as a non-retryable VALIDATION failure whose `code` tells followers why, e.g.
 * `E_FLIGHT_HTTP_UNSHAREABLE_STATUS_500`, `…_PRIVATE`, `…_TOO_LARGE`. Never reaches users.
 */
export class UnshareableResponse extends Error {
  readonly failureType = 'VALIDATION';
  readonly code: string;

  constructor(
    readonly reason: UnshareableReason,
    readonly status: number | undefined,
  ) {
    super(`response not shared (${reason}${status === undefined ? '' : ` ${status}`})`);
    this.name = 'UnshareableResponse';
    this.code = `${UNSHAREABLE_PREFIX}${reason.toUpperCase().replace(/-/g, '_')}${reason === 'status' ? `_${status}` : ''}`;
  }
}

export type UnshareableReason = 'status' | 'private' | 'vary' | 'too-large' | 'body' | 'handler-error' | 'timeout';

export const UNSHAREABLE_PREFIX = 'E_FLIGHT_HTTP_UNSHAREABLE_';

/** Reads back an unshareable failure code: the owner's status when it was refused for its status. */
export function parseUnshareableCode(code: string): { reason: 'status'; status: number } | { reason: 'other' } | undefined {
  if (!code.startsWith(UNSHAREABLE_PREFIX)) return undefined;
  const match = /^STATUS_(\d{3})$/.exec(code.slice(UNSHAREABLE_PREFIX.length));
  return match ? { reason: 'status', status: Number(match[1]) } : { reason: 'other' };
}
