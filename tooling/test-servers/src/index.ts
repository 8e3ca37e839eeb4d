/**
 * Redis servers of a test's own (standalone, Cluster, valkey), free ports, raw RESP commands and key
 * checks, a TCP proxy that makes network faults, a seeded generator: what every @flight test, bench and chaos run stands on. No @flight package is imported here.
 */
export {
  startRedisServer,
  startRedisCluster,
  freePort,
  onFreePorts,
  PortTakenError,
  sleep,
  type RedisServer,
  type RedisCluster,
  type StartRedisServerOptions,
  type StartRedisClusterOptions,
} from './servers';
export { startValkeyServer, valkeyServerBinary } from './valkey';
export { scanKeysWithoutTtl, deleteKeys, sharedRedisUrl, countClients } from './keys';
export { rawCommand, serverTimeMs, type RespValue } from './resp';
export { systemChromium, HEADLESS_CHROMIUM_ARGS } from './chromium';
export { startTcpProxy, type TcpProxy, type ProxyMode } from './tcp-proxy';
export { startSentinelTopology, type SentinelTopology, type StartSentinelOptions } from './sentinel';
export { seeded } from './seeded';
export { WAIT_FOR_EFFECT } from './wait';
export { replicaInSync, infoField } from './replication';
export { startLineProcess, type LineProcess, type LineProcessOptions } from './line-process';
