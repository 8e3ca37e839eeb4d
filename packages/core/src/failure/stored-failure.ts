import type { FailureRecord, FlightMeta } from '../state/types.js';

/** The failure a FAILED or CANCELLED record holds, as replayed to later callers (UNEXPECTED when it names none). */
export function failureOf(meta: FlightMeta): FailureRecord {
  return {
    type: meta.errorType || 'UNEXPECTED',
    code: meta.errorCode || 'E_UNEXPECTED',
    message: meta.errorMessage,
    retryable: meta.retryable,
  };
}
