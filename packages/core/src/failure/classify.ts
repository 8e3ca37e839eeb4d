/**
 * Failure classification: any thrown value → TIMEOUT, OVERLOAD,
 * PROVIDER, VALIDATION or UNEXPECTED, then the stage's retryable mapping.
 */
import { BrokenCircuitError, BulkheadRejectedError, IsolatedCircuitError, TaskCancelledError } from 'cockatiel';
import {
  FlightExecutionError,
  FlightLockTimeoutError,
  FlightRunTimeoutError,
  FlightWaitTimeoutError,
  FlightResultTooLargeError,
  FlightValidationError,
} from '../errors.js';
import type { StagePolicy } from '../policy/stage-policy.js';
import { FAILURE_TYPES, type FailureRecord, type FailureType } from '../state/types.js';

const MAX_MESSAGE_LENGTH = 1000;

function statusOf(error: any): number | undefined {
  const status = error?.status ?? error?.statusCode ?? error?.response?.status;
  return typeof status === 'number' ? status : undefined;
}

/** The built-in rules: library errors, resilience rejections, HTTP-like statuses, network codes. */
export function classifyError(error: unknown): FailureType {
  const e = error as any;
  if (e instanceof FlightExecutionError) return e.errorType;
  if (e instanceof FlightValidationError || e instanceof FlightResultTooLargeError) return 'VALIDATION';
  if (e instanceof TaskCancelledError || e instanceof FlightRunTimeoutError || e instanceof FlightWaitTimeoutError) return 'TIMEOUT';
  if (e instanceof FlightLockTimeoutError) return 'OVERLOAD';
  if (e instanceof BulkheadRejectedError || e instanceof BrokenCircuitError || e instanceof IsolatedCircuitError) return 'OVERLOAD';
  if (typeof e?.failureType === 'string' && (FAILURE_TYPES as readonly string[]).includes(e.failureType)) {
    return e.failureType as FailureType;
  }
  const status = statusOf(e);
  if (status !== undefined) {
    if (status === 408 || status === 504) return 'TIMEOUT';
    if (status === 429 || status === 503) return 'OVERLOAD';
    if (status >= 500) return 'PROVIDER';
    if (status >= 400) return 'VALIDATION';
  }
  if (e?.name === 'TimeoutError' || e?.code === 'ETIMEDOUT' || e?.code === 'UND_ERR_HEADERS_TIMEOUT') return 'TIMEOUT';
  if (['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_SOCKET'].includes(e?.code)) return 'PROVIDER';
  return 'UNEXPECTED';
}

/** Builds the stored failure record of an error under a stage policy. */
export function toFailureRecord(error: unknown, policy: StagePolicy): FailureRecord {
  const type = policy.classify?.(error) ?? classifyError(error);
  const e = error as any;
  const code = e instanceof FlightExecutionError ? e.errorCode : typeof e?.code === 'string' && e.code.length <= 64 ? e.code : `E_${type}`;
  const raw = error instanceof Error ? error.message : String(error);
  return {
    type,
    code,
    message: raw.length > MAX_MESSAGE_LENGTH ? `${raw.slice(0, MAX_MESSAGE_LENGTH)}…` : raw,
    retryable: type !== 'CANCELLED' && policy.retryableFailures.includes(type),
  };
}

/** The error every caller of a failed flight receives. */
export function toExecutionError(
  failure: FailureRecord,
  context: { stage: string; key: string; replayed: boolean; cause?: unknown },
): FlightExecutionError {
  return new FlightExecutionError(
    `flight ${context.stage} failed (${failure.type}/${failure.code}): ${failure.message}`,
    { errorType: failure.type, errorCode: failure.code, retryable: failure.retryable, replayed: context.replayed },
    { cause: context.cause, context: { stage: context.stage, key: context.key } },
  );
}
