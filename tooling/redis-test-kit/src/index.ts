/**
 * The Redis test kit: the behaviour suites both Redis adapters run (and any other Redis client binding
 * would), multi-process workers, Cluster checks and record tampering, over the servers of
 * `@flight/test-servers` (re-exported, so an adapter's tests need one import).
 */
export * from '@flight/test-servers';
export { registerRedisAdapterSuite, type RedisAdapterUnderTest } from './adapter-suite';
export { registerUntouchedCompleteSuite } from './untouched-suite';
export { registerForgetSuite } from './forget-suite';
export { registerStreamSuite } from './stream-suite';
export { registerStaleSuite } from './stale-suite';
export { registerSentinelSuite, type SentinelAdapter } from './sentinel-suite';
export { registerStrictAckSuite } from './strict-ack-suite';
export { startWorker, type Worker, type WorkerOptions, type BurstResult, type StreamBurstResult } from './multiprocess';
export { checkShardedWakeup } from './cluster-wakeup';
export { checkClusterFastAcquire } from './cluster-fast-acquire';
export { checkClusterBytes } from './cluster-bytes';
export { patchFlightRecord, type RecordField } from './record';
export { checkInspector } from './inspect-check';
export { withoutTerminalNotices } from './lossy-driver';
export { checkCli, runCli, type CliRun } from './cli-check';
export { registerOracleSuite } from './oracle/oracle-suite';
export { randomSchedule, runOracle, type OracleReport } from './oracle/oracle-run';
export { NAMED_CASES } from './oracle/named-cases';
