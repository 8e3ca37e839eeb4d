/**
 * @flight/redis-node — the Redis coordinator and session lock of @flight, bound to node-redis
 * (`redis` 5 or 6; a client from `createClient`, `createCluster` or `createSentinel`). Only the driver lives here:
 * scripts, keys, deadlines, error mapping and notifications are shared with @flight/redis-ioredis.
 */
import type { FlightCoordinator } from '@flight/core/adapter';
import {
  assertConnectionOptions,
  COORDINATOR_OPTION_NAMES,
  SESSION_LOCK_OPTION_NAMES,
  type ClientLibrary,
  createRedisCoordinator,
  createRedisSessionLock,
  type RedisCoordinator,
  type RedisCoordinatorOptions,
  type RedisSessionLock,
  type RedisSessionLockOptions,
} from '@flight/redis-scripts';
import { createNodeRedisDriver, type NodeRedisConnection } from './driver';

export type { NodeRedisClient, NodeRedisCluster, NodeRedisSentinel } from './client';
export { createNodeRedisDriver, type NodeRedisConnection } from './driver';

export type NodeRedisCoordinatorOptions = NodeRedisConnection & RedisCoordinatorOptions;
export type NodeRedisSessionLockOptions = NodeRedisConnection & RedisSessionLockOptions;

/** What the factories check a `client` against (see `assertConnectionOptions`). */
const NODE_REDIS: ClientLibrary = {
  name: 'redis',
  clientHint: 'your connected node-redis createClient(), createCluster() or createSentinel()',
  methods: ['sendCommand', 'sSubscribe', 'on'],
  problemOf(client, missing) {
    if (missing.length > 0 && typeof client.call === 'function' && typeof client.callBuffer === 'function') {
      return 'client is an ioredis client: use createIoredisCoordinator from @flight/redis-ioredis, or pass a node-redis client';
    }
    // A Sentinel client has no duplicate(): it keeps its own pub/sub connection on the primary.
    if (missing.length === 0 && typeof client.duplicate !== 'function' && typeof client.getMasterNode !== 'function') {
      return `client is not ${this.clientHint} (it has no duplicate)`;
    }
    if (missing.length === 0 && client.isOpen === false) {
      return 'client is not connected: call `await client.connect()` before creating the coordinator, or pass { redis } and it connects its own';
    }
    return undefined;
  },
};

/**
 * The flight coordinator on Redis through node-redis. Pass your connected `createClient()`,
 * `createCluster()` or `createSentinel()` client (it is not closed by `close()`; one duplicate connection
 * is opened for notifications while followers wait — one per master on a cluster; a Sentinel client's own
 * pub/sub connection is used), or `redis` client options.
 * Needs Redis >= 7.0.
 */
export function createNodeRedisCoordinator(options: NodeRedisCoordinatorOptions): RedisCoordinator & FlightCoordinator {
  assertConnectionOptions('createNodeRedisCoordinator', options, NODE_REDIS, COORDINATOR_OPTION_NAMES);
  const { client, redis, ...rest } = options;
  const driver = createNodeRedisDriver(client ? { client } : { redis: redis! }, rest.commandTimeoutMs);
  return createRedisCoordinator(driver, rest);
}

/** The session lock on Redis through node-redis (token-checked acquire/release/renew). */
export function createNodeRedisSessionLock(options: NodeRedisSessionLockOptions): RedisSessionLock {
  assertConnectionOptions('createNodeRedisSessionLock', options, NODE_REDIS, SESSION_LOCK_OPTION_NAMES);
  const { client, redis, ...rest } = options;
  return createRedisSessionLock(createNodeRedisDriver(client ? { client } : { redis: redis! }, rest.commandTimeoutMs), rest);
}

export type {
  RedisCoordinator,
  RedisCoordinatorOptions,
  RedisSessionLock,
  RedisSessionLockOptions,
  WaitReplicasOptions,
} from '@flight/redis-scripts';
export { FlightRedisVersionError, type NotificationCounters } from '@flight/redis-scripts';
