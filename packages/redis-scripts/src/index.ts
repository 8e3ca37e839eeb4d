export type { RedisDriver, RedisSubscribeHandlers, RedisSubscription } from './driver';
export { createRedisCoordinator, MAX_ERROR_MESSAGE_LENGTH, type RedisCoordinator } from './coordinator';
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
export { flightKeys, eventChannel, lockKey, digest, type FlightKeys } from './keys';
export { toFlightRedisError, withDeadline, closeWithin, DeadlineExceeded } from './errors';
export { runScript } from './scripts';
export { LUA_SCRIPTS, type LuaScript, type LuaScriptName } from './lua.generated';
export { clusterKeySlot } from './slot';
