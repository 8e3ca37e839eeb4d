/** Test utilities shared by the Redis adapters (and reusable by other @flight packages' tests). */
export {
  startRedisServer,
  startRedisCluster,
  freePort,
  type RedisServer,
  type RedisCluster,
  type StartRedisServerOptions,
  type StartRedisClusterOptions,
} from './servers';
export { startValkeyServer, valkeyServerBinary } from './valkey';
export { scanKeysWithoutTtl, deleteKeys, sharedRedisUrl, countClients } from './keys';
export { rawCommand, type RespValue } from './resp';
export { registerRedisAdapterSuite, type RedisAdapterUnderTest } from './adapter-suite';
export { registerUntouchedCompleteSuite } from './untouched-suite';
export { registerForgetSuite } from './forget-suite';
export { startWorker, type Worker, type WorkerOptions, type BurstResult, type StreamBurstResult } from './multiprocess';
export { checkShardedWakeup } from './cluster-wakeup';
export { patchFlightRecord, runningMeta, type RecordField } from './record';
export { registerStreamSuite } from './stream-suite';
export { encodeRecord, RECORD_HEADER } from '../record.generated';
export { checkClusterFastAcquire } from './cluster-fast-acquire';
export { checkClusterBytes } from './cluster-bytes';
