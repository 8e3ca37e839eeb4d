/**
 * What every HTTP binding (`@flight/express`, `@flight/koa`, `@flight/fastify`) re-exports from this package,
 * listed once: the errors its middleware answers with, the documented defaults, and the types of its options
 * and of a shared response. Each binding re-exports it whole (`export * from '@flight/http-shared/public'`).
 */
export {
  FlightBodyTooLargeError,
  FlightHttpError,
  FlightHttpErrorCodes,
  FlightHttpTimeoutError,
  FlightHttpUnavailableError,
  FlightIdempotencyConflictError,
  FlightIdempotencyIdentityRequiredError,
  FlightIdempotencyKeyInvalidError,
  FlightIdempotencyKeyMissingError,
  FlightIdempotencyKeyReusedError,
  FlightResumeExpiredError,
  FlightResumeInvalidError,
  FlightResumeMismatchError,
  FlightSharedFailureError,
} from './errors.js';
export {
  DEFAULT_CREDENTIAL_HEADERS,
  DEFAULT_REPLAY_HEADERS,
  REPRESENTATION_HEADERS,
  type FlightKeySpec,
  type IdempotencyOptions,
  type ResumeOptions,
} from './options.js';
export type { HttpFlightRole } from './exchange.js';
export type { SharedResponse } from './response.js';
