/**
 * Every failure the library raises, one class each, with a stable `code`.
 * `FlightErrorCodes` lists them; `toFlightError` turns anything thrown into one of them.
 */
import type { FailureType } from './state/types.js';

export interface FlightErrorContext {
  stage?: string | undefined;
  key?: string | undefined;
  [field: string]: unknown;
}

/** Base class: every error thrown by @flight packages is an instance of it. */
export class FlightError extends Error {
  static readonly code: string = 'E_FLIGHT';
  readonly code: string;
  readonly context: FlightErrorContext;

  constructor(message: string, options: { cause?: unknown; context?: FlightErrorContext } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = (new.target as typeof FlightError).code;
    this.context = options.context ?? {};
  }
}

/** A key, stage or option is invalid. Nothing was sent anywhere. */
export class FlightValidationError extends FlightError {
  static override readonly code: string = 'E_FLIGHT_VALIDATION';
}

/**
 * The library was configured wrongly: an unknown option (a typo), a missing or wrong client or coordinator,
 * a value out of range. Thrown where it is configured (creation, `register`), never at first use; the
 * message names the option and what to do. Context: `option`, and `fix` when there is one.
 */
export class FlightConfigurationError extends FlightValidationError {
  static override readonly code = 'E_FLIGHT_CONFIGURATION';
}

/** An owner write was refused: another owner (a newer epoch) holds the flight, or it ended. */
export class FlightFencedError extends FlightError {
  static override readonly code = 'E_FLIGHT_FENCED';
}

/** The owner lost its lease (refused or failed renewal, stalled, or past its max run time). */
export class FlightLeaseLostError extends FlightError {
  static override readonly code = 'E_FLIGHT_LEASE_LOST';
}

/**
 * A run passed its deadline: the guard's `timeoutMs`, or `maxRunMs` of a run that holds no lease (local
 * mode, hybrid fallback). The run was abandoned; its callers get a TIMEOUT failure.
 */
export class FlightRunTimeoutError extends FlightError {
  static override readonly code = 'E_FLIGHT_RUN_TIMEOUT';
}

/** A follower waited longer than the stage's wait timeout. */
export class FlightWaitTimeoutError extends FlightError {
  static override readonly code = 'E_FLIGHT_WAIT_TIMEOUT';
}

/** The caller's own AbortSignal fired; the flight goes on for everyone else. */
export class FlightAbortedError extends FlightError {
  static override readonly code = 'E_FLIGHT_ABORTED';
}

/** The flight was cancelled cluster-wide. */
export class FlightCancelledError extends FlightError {
  static override readonly code = 'E_FLIGHT_CANCELLED';
}

/** The coordinator (Redis) failed or did not answer by its deadline. */
export class FlightCoordinationError extends FlightError {
  static override readonly code: string = 'E_FLIGHT_COORDINATION';
  /**
   * True when the request may have been applied anyway (no answer by the deadline: the reply, not the
   * request, may be what was lost). Every coordinator write is idempotent for the same arguments, so
   * such a call can be repeated as is.
   */
  readonly outcomeUnknown: boolean;

  constructor(message: string, options: { cause?: unknown; context?: FlightErrorContext; outcomeUnknown?: boolean } = {}) {
    super(message, options);
    this.outcomeUnknown = options.outcomeUnknown ?? false;
  }
}

/**
 * An owner write was acknowledged by fewer replicas than the strict acknowledgement mode asks for
 * (`waitReplicas.unacknowledged`): it does not count, so no supplier ran on it. A failover could lose
 * such a write; running on it could start a second run. Hybrid mode never answers it by running
 * in-process, for the same reason.
 */
export class FlightReplicationError extends FlightCoordinationError {
  static override readonly code = 'E_FLIGHT_REPLICATION';
  /** Replicas that acknowledged the write. */
  readonly acknowledged: number;
  /** Replicas the write needed. */
  readonly required: number;

  constructor(message: string, options: { cause?: unknown; context?: FlightErrorContext; acknowledged: number; required: number }) {
    super(message, options);
    this.acknowledged = options.acknowledged;
    this.required = options.required;
  }
}

/** A stored payload failed its checksum, was truncated, or could not be decoded. */
export class FlightCorruptResultError extends FlightError {
  static override readonly code = 'E_FLIGHT_CORRUPT_RESULT';
}

/** A result is larger than the stage's size cap (on encode, or when it inflates on decode). */
export class FlightResultTooLargeError extends FlightError {
  static override readonly code = 'E_FLIGHT_RESULT_TOO_LARGE';
}

/** A session lock could not be acquired in time. */
export class FlightLockTimeoutError extends FlightError {
  static override readonly code = 'E_FLIGHT_LOCK_TIMEOUT';
}

/** A session lock was released or renewed by a holder that no longer holds it. */
export class FlightLockLostError extends FlightError {
  static override readonly code = 'E_FLIGHT_LOCK_LOST';
}

/**
 * The owner's failure, as seen by every caller of the flight: thrown to the owner's callers and
 * replayed to followers (non-retryable failures). Carries the failure's errorType/errorCode/retryable.
 */
export class FlightExecutionError extends FlightError {
  static override readonly code = 'E_FLIGHT_EXECUTION';
  readonly errorType: FailureType;
  readonly errorCode: string;
  readonly retryable: boolean;
  /** True when this caller received a failure recorded by another caller's run. */
  readonly replayed: boolean;

  constructor(
    message: string,
    details: { errorType: FailureType; errorCode: string; retryable: boolean; replayed: boolean },
    options: { cause?: unknown; context?: FlightErrorContext } = {},
  ) {
    super(message, options);
    this.errorType = details.errorType;
    this.errorCode = details.errorCode;
    this.retryable = details.retryable;
    this.replayed = details.replayed;
  }
}

/**
 * A streamed flight's run was replaced (its owner died or was fenced, a new owner started over) after
 * this caller had already received chunks of it, and the caller did not opt in to restarts
 * (`onRestart: 'restart'`). Context: `epoch` (the abandoned run), `newEpoch`, `received` (chunks given).
 */
export class FlightStreamInterruptedError extends FlightError {
  static override readonly code = 'E_FLIGHT_STREAM_INTERRUPTED';
}

/** A streamed run passed its cap on chunks or bytes (`maxChunks` / `maxBytes` of `executeStream`). */
export class FlightStreamLimitError extends FlightError {
  static override readonly code = 'E_FLIGHT_STREAM_LIMIT';
  /** Classified as VALIDATION: the same input would pass the cap again. */
  readonly failureType = 'VALIDATION';
}

/**
 * A resumed stream (`executeStream` with `after`) whose run is gone: no run of the flight is in progress
 * and no completed one is kept. Nothing was run for it. Context: `epoch`, `index` (where it asked to resume).
 */
export class FlightStreamExpiredError extends FlightError {
  static override readonly code = 'E_FLIGHT_STREAM_EXPIRED';
  /** Classified as VALIDATION: asking again resumes nothing either. */
  readonly failureType = 'VALIDATION';
}

/** `executeStream` needs a coordinator with the streaming extension (`supportsStreams`) in distributed and hybrid modes. */
export class FlightStreamUnsupportedError extends FlightError {
  static override readonly code = 'E_FLIGHT_STREAM_UNSUPPORTED';
}

/** Every error class by its code. */
export const FlightErrorCodes = {
  E_FLIGHT: FlightError,
  E_FLIGHT_VALIDATION: FlightValidationError,
  E_FLIGHT_FENCED: FlightFencedError,
  E_FLIGHT_LEASE_LOST: FlightLeaseLostError,
  E_FLIGHT_WAIT_TIMEOUT: FlightWaitTimeoutError,
  E_FLIGHT_RUN_TIMEOUT: FlightRunTimeoutError,
  E_FLIGHT_ABORTED: FlightAbortedError,
  E_FLIGHT_CANCELLED: FlightCancelledError,
  E_FLIGHT_COORDINATION: FlightCoordinationError,
  E_FLIGHT_REPLICATION: FlightReplicationError,
  E_FLIGHT_CORRUPT_RESULT: FlightCorruptResultError,
  E_FLIGHT_RESULT_TOO_LARGE: FlightResultTooLargeError,
  E_FLIGHT_LOCK_TIMEOUT: FlightLockTimeoutError,
  E_FLIGHT_LOCK_LOST: FlightLockLostError,
  E_FLIGHT_EXECUTION: FlightExecutionError,
  E_FLIGHT_STREAM_INTERRUPTED: FlightStreamInterruptedError,
  E_FLIGHT_STREAM_LIMIT: FlightStreamLimitError,
  E_FLIGHT_STREAM_EXPIRED: FlightStreamExpiredError,
  E_FLIGHT_STREAM_UNSUPPORTED: FlightStreamUnsupportedError,
} as const;

export type FlightErrorCode = keyof typeof FlightErrorCodes;

/**
 * True for errors that mean "the coordinator could not be used" (what hybrid mode falls back on). An
 * unacknowledged owner write (`FlightReplicationError`) is not one: running in-process on it would be the
 * second run strict acknowledgement exists to prevent.
 */
export function isCoordinationFailure(error: unknown): boolean {
  return error instanceof FlightCoordinationError && !(error instanceof FlightReplicationError);
}

/**
 * Wraps anything thrown by a coordinator into a FlightCoordinationError (typed errors pass through). A
 * `TypeError` or `ReferenceError` is no failure to reach Redis but a coordinator misused or miswired (a
 * client of another library, a method missing): it becomes a `FlightConfigurationError`, which hybrid mode
 * never answers by running in-process.
 */
export function toCoordinationError(error: unknown, context: FlightErrorContext = {}): FlightError {
  if (error instanceof FlightError) return error;
  if (error instanceof TypeError || error instanceof ReferenceError) {
    return new FlightConfigurationError(
      `the coordinator failed with a programming error (check its client and options): ${error.message}`,
      {
        cause: error,
        context,
      },
    );
  }
  const message = error instanceof Error ? error.message : String(error);
  return new FlightCoordinationError(`coordinator failed: ${message}`, { cause: error, context });
}
