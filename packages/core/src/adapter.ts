/**
 * `@flight/core/adapter`: what coordinator, middleware and integration authors build on — the ports a
 * coordinator implements, the record types and the pure state machine its scripts mirror, the conformance
 * helpers' clock and logger, and the checks and helpers the bindings share. Applications import
 * `@flight/core`; nothing here is needed to call `execute`.
 */
export * from './state/types.js';
export * as transitions from './state/transitions.js';
export type { Transition } from './state/transitions.js';
export * from './ports/index.js';
export { isCoordinationFailure, toCoordinationError } from './errors.js';
export { assertKnownOptions } from './config/known-options.js';
export { assertStageName } from './policy/stage-policy.js';
export { DeadlineQueue, type Deadline } from './run/deadline-queue.js';
export { flightId, MAX_KEY_LENGTH } from './keys/key-builder.js';
export { untilAborted } from './abort.js';
export { DEFAULT_INLINE_RESULT_BYTES, type MemoryCoordinator } from './memory/memory-coordinator.js';
export type { EnvelopeCodec } from './codec/envelope-codec.js';
export { encodeChunk, decodeChunk } from './stream/chunk-codec.js';
export { DEFAULT_MAX_STREAM_CHUNKS, DEFAULT_STREAM_BATCH_MS } from './stream/options.js';
export { activeSpan, type SpanHandle } from './telemetry/active-span.js';
export { resolvedOtelApi } from './telemetry/otel-api.js';
