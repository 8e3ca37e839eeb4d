export type { RedisDriver, RedisSubscriber, RedisSubscriberHandlers, ScriptRunner } from './driver';
export { createRedisCoordinator, type RedisCoordinator } from './coordinator';
export { assertRedisVersion, MIN_REDIS_VERSION } from './version-check';
export { MAX_ERROR_MESSAGE_LENGTH } from './script-args';
export { parseNotice, type Notice, type NotificationCounters } from './notifications';
export { createRedisSessionLock, type RedisSessionLock, type RedisSessionLockOptions } from './session-lock';
export {
  resolveRedisOptions,
  DEFAULT_PREFIX,
  DEFAULT_COMMAND_TIMEOUT_MS,
  DEFAULT_MAX_PAYLOAD_BYTES,
  DEFAULT_INLINE_RESULT_BYTES,
  type RedisCoordinatorOptions,
  type ResolvedRedisOptions,
} from './options';
export { flightKeys, noticeChannel, lockKey, digest, RECORD_LAYOUT, type FlightKeys } from './keys';
export { toFlightRedisError, withDeadline, closeWithin, DeadlineExceeded, FlightRedisVersionError } from './errors';
export { runScript } from './scripts';
export { LUA_SCRIPTS, type LuaScript, type LuaScriptName } from './lua.generated';
export { clusterKeySlot } from './slot';
export { assertConnectionOptions, COORDINATOR_OPTION_NAMES, SESSION_LOCK_OPTION_NAMES, type ClientLibrary } from './connection-options';
