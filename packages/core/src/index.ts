export * from './errors.js';
export { assertKnownOptions } from './config/known-options.js';
export * from './state/types.js';
export * as transitions from './state/transitions.js';
export type { Transition } from './state/transitions.js';
export * from './ports/index.js';
export type { FlightEventMap, FlightEventName, FlightRole, LeaseLossReason } from './events/types.js';
export { FlightEvents } from './events/emitter.js';
export { assertStageName, type StagePolicyInput, type GuardPolicy } from './policy/stage-policy.js';
export { DeadlineQueue, type Deadline } from './run/deadline-queue.js';
export { createEnvelopeCodec, type EnvelopeCodec, type EnvelopeCodecOptions, type Serializer } from './codec/envelope-codec.js';
export { createLruReplayCache, type LruReplayCacheOptions } from './cache/lru-replay-cache.js';
export { buildFlightKey, hashPart, flightId, MAX_KEY_LENGTH, type KeyPart } from './keys/key-builder.js';
export { LocalSingleFlight, type LocalResult } from './local/local-single-flight.js';
export { untilAborted } from './abort.js';
export {
  createMemoryCoordinator,
  DEFAULT_INLINE_RESULT_BYTES,
  type MemoryCoordinator,
  type MemoryCoordinatorOptions,
} from './memory/memory-coordinator.js';
export { createMemorySessionLock } from './memory/memory-session-lock.js';
export { FLIGHT_MODES, type FlightMode, type SingleFlightOptions } from './flight/options.js';
export { SingleFlight, createSingleFlight } from './flight/single-flight.js';
export type { ExecuteOptions, FlightContext, FlightResult, Supplier } from './flight/types.js';
export { FlightStreamRestart } from './stream/restart.js';
export type { ChunkSupplier } from './stream/streamed-supplier.js';
export type { ExecuteStreamOptions, FlightStream, StreamChunk, StreamJson, StreamRestartMode } from './stream/types.js';
export { DEFAULT_MAX_STREAM_CHUNKS, DEFAULT_STREAM_BATCH_MS } from './stream/options.js';
export { encodeChunk, decodeChunk } from './stream/chunk-codec.js';
