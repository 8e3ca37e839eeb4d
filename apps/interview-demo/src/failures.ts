/**
 * How the demo answers a failed call: the HTTP status and the JSON error body (also the data of a
 * stream's `error` event). Model errors arrive as the `openai` SDK's classes on every node (`@flight/openai`
 * rebuilds them from the flight's failure record); the single-flight's own errors as `@flight/core`'s.
 *
 * | failure                                            | status | type       |
 * |----------------------------------------------------|--------|------------|
 * | model 429                                          | 503    | OVERLOAD   |
 * | model 5xx, connection failed or cut, stream cut    | 502    | PROVIDER   |
 * | model 400 and other 4xx                            | 422    | VALIDATION |
 * | model timeout, flight wait timeout                 | 504    | TIMEOUT    |
 * | session lock not acquired in time                  | 409    |            |
 * | coordinator unavailable                            | 503    |            |
 * | caller went away                                   | 499    |            |
 */
import {
  FlightAbortedError,
  FlightCoordinationError,
  FlightExecutionError,
  FlightLockTimeoutError,
  FlightWaitTimeoutError,
} from '@flight/core';
import { FlightOpenAIStreamCutError } from '@flight/openai';
import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';

type FailureType = 'TIMEOUT' | 'OVERLOAD' | 'PROVIDER' | 'VALIDATION' | 'CANCELLED' | 'UNEXPECTED';

const STATUS: Record<FailureType, number> = {
  TIMEOUT: 504,
  OVERLOAD: 503,
  PROVIDER: 502,
  VALIDATION: 422,
  CANCELLED: 409,
  UNEXPECTED: 500,
};

/** The failure class of a model error (the SDK's), or undefined for any other error. */
function modelFailure(error: unknown): { type: FailureType; code: string } | undefined {
  if (error instanceof APIConnectionTimeoutError) return { type: 'TIMEOUT', code: 'E_MODEL_TIMEOUT' };
  if (error instanceof FlightOpenAIStreamCutError) return { type: 'PROVIDER', code: error.code };
  if (error instanceof APIError && typeof error.status === 'number') {
    const type = error.status === 429 ? 'OVERLOAD' : error.status >= 500 ? 'PROVIDER' : 'VALIDATION';
    return { type, code: `E_MODEL_HTTP_${error.status}` };
  }
  if (error instanceof APIConnectionError) return { type: 'PROVIDER', code: 'E_MODEL_CONNECTION' };
  return undefined;
}

/** HTTP status for a failed call. */
export function statusOf(error: unknown): number {
  const model = modelFailure(error);
  if (model) return STATUS[model.type];
  if (error instanceof FlightExecutionError) return STATUS[error.errorType as FailureType] ?? 500;
  if (error instanceof FlightWaitTimeoutError) return 504;
  if (error instanceof FlightLockTimeoutError) return 409;
  if (error instanceof FlightCoordinationError) return 503;
  if (error instanceof FlightAbortedError) return 499;
  return 500;
}

/** The JSON body of a failed call (also the data of a stream's `error` event). */
export function errorBody(error: unknown) {
  const e = error as any;
  const model = modelFailure(error);
  return {
    error: {
      code: model?.code ?? e?.code ?? 'E_UNEXPECTED',
      type: model?.type ?? e?.errorType ?? null,
      errorCode: e?.errorCode ?? null,
      retryable: model ? model.type !== 'VALIDATION' : (e?.retryable ?? null),
      replayed: e?.replayed ?? false,
      message: String(e?.message ?? error),
    },
  };
}
