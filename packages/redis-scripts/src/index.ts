export type { RedisDriver, RedisSubscriber, RedisSubscriberHandlers, ScriptRunner } from './driver';
export { createRedisCoordinator, type RedisCoordinator } from './coordinator';
export { assertRedisVersion, MIN_REDIS_VERSION } from './version-check';
export { MAX_ERROR_MESSAGE_LENGTH } from './spine/script-args';
export { parseNotice, type Notice, type NotificationCounters } from './wake-up/notifications';
export { createRedisSessionLock, type RedisSessionLock, type RedisSessionLockOptions } from './session-lock';
export {
  resolveRedisOptions,
  DEFAULT_PREFIX,
  DEFAULT_COMMAND_TIMEOUT_MS,
  DEFAULT_MAX_PAYLOAD_BYTES,
  DEFAULT_INLINE_RESULT_BYTES,
  type RedisCoordinatorOptions,
  type ResolvedRedisOptions,
  type WaitReplicasOptions,
} from './options';
export { flightKeys, noticeChannel, lockKey, digest, parseFlightKey, stageKeyPattern, RECORD_LAYOUT, type FlightKeys } from './keys';
export { MAX_LIST_LIMIT, type FlightInspection, type Inspector, type ListFlightsOptions } from './inspect/inspector';
export { toFlightRedisError, withDeadline, closeWithin, DeadlineExceeded, FlightRedisVersionError } from './errors';
export { ReplacedPrimaries, parseSwitchMaster, REPLACED_PRIMARY_FOR_MS, type PrimaryAddress } from './replaced-primaries';
export { runScript } from './spine/scripts';
export { LUA_SCRIPTS, type LuaScript, type LuaScriptName } from './spine/lua.generated';
export { clusterKeySlot } from './slot';
export { assertConnectionOptions, COORDINATOR_OPTION_NAMES, SESSION_LOCK_OPTION_NAMES, type ClientLibrary } from './connection-options';
export { RECORD_HEADER, RECORD_HEADER_BYTES, RECORD_TEXT_FIELDS, encodeRecord } from './spine/record.generated';
export { SAMPLE_MAX_AGE_MS } from './fast-paths/server-clock';
export { runFlightCli, EXIT, USAGE, type CliConnection, type CliCoordinator, type CliEnv } from './inspect/cli';
