export type { FlightCoordinator, ForgetListener, InspectableCoordinator } from './coordinator.js';
export type { Clock, TimerHandle } from './clock.js';
export { systemClock, sleep } from './clock.js';
export type { FlightLogger } from './logger.js';
export { silentLogger } from './logger.js';
export type { EncodeOptions, ResultCodec } from './codec.js';
export type { ReplayCache, ReplayEntry } from './replay-cache.js';
export type { SessionLock, SessionLockHandle } from './session-lock.js';
export type {
  FlightStreamCoordinator,
  StreamingFlightCoordinator,
  StreamAppendInput,
  StreamAppendReply,
  StreamEntry,
  StreamReadInput,
  StreamReadReply,
  StreamWaitReply,
  StreamWaitInput,
} from './stream-coordinator.js';
export { supportsStreams } from './stream-coordinator.js';
