/**
 * `@flight/core`: what applications call — `createSingleFlight` and its options, `execute` and
 * `executeStream` with their results, the typed errors, flight keys, and the in-process parts (memory
 * coordinator, L1 cache, codec) an application may configure. The ports those parts implement (`Clock`,
 * `FlightCoordinator`, `ReplayCache`, …) and what coordinator, middleware and integration authors build on
 * (record types, the state machine) are in `@flight/core/adapter`.
 */
export { SingleFlight, createSingleFlight } from './flight/single-flight.js';
export { FLIGHT_MODES, type FlightMode, type SingleFlightOptions } from './flight/options.js';
export type { ExecuteOptions, FlightContext, FlightResult, Supplier } from './flight/types.js';
export type { StagePolicyInput, GuardPolicy } from './policy/stage-policy.js';
export { FlightStreamRestart } from './stream/restart.js';
export type { ChunkSupplier } from './stream/streamed-supplier.js';
export type { ExecuteStreamOptions, FlightStream, StreamChunk, StreamJson, StreamPosition, StreamRestartMode } from './stream/types.js';
export type { FlightEventMap, FlightEventName, FlightRole, LeaseLossReason } from './events/types.js';
export { buildFlightKey, hashPart, type KeyPart } from './keys/key-builder.js';
export { createMemoryCoordinator, type MemoryCoordinatorOptions } from './memory/memory-coordinator.js';
export { createMemorySessionLock } from './memory/memory-session-lock.js';
export { createLruReplayCache, type LruReplayCacheOptions } from './cache/lru-replay-cache.js';
export { createEnvelopeCodec, type EnvelopeCodecOptions, type Serializer } from './codec/envelope-codec.js';
export { FLIGHT_METRICS } from './telemetry/flight-metrics.js';
export {
  FlightAbortedError,
  FlightCancelledError,
  FlightConfigurationError,
  FlightCoordinationError,
  FlightCorruptResultError,
  FlightError,
  FlightErrorCodes,
  FlightExecutionError,
  FlightFencedError,
  FlightLeaseLostError,
  FlightLockLostError,
  FlightLockTimeoutError,
  FlightReplicationError,
  FlightResultTooLargeError,
  FlightRunTimeoutError,
  FlightStreamInterruptedError,
  FlightStreamExpiredError,
  FlightStreamLimitError,
  FlightStreamUnsupportedError,
  FlightValidationError,
  FlightWaitTimeoutError,
  type FlightErrorCode,
  type FlightErrorContext,
} from './errors.js';
