/**
 * @flight/redis-ioredis — the Redis coordinator and session lock of @flight, bound to ioredis 5 or 6
 * (standalone `Redis` or `Cluster`). Only the driver lives here: scripts, keys, deadlines, error
 * mapping and notifications are shared with @flight/redis-node.
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
import { createIoredisDriver, type IoredisConnection } from './driver';

export type { IoredisClient } from './client';
export { createIoredisDriver, type IoredisConnection } from './driver';

export type IoredisCoordinatorOptions = IoredisConnection & RedisCoordinatorOptions;
export type IoredisSessionLockOptions = IoredisConnection & RedisSessionLockOptions;

/** What the factories check a `client` against (see `assertConnectionOptions`). */
const IOREDIS: ClientLibrary = {
  name: 'ioredis',
  clientHint: 'your ioredis (>= 5) Redis or Cluster',
  methods: ['call', 'callBuffer', 'duplicate', 'ssubscribe', 'on', 'quit'],
  problemOf(client, missing) {
    if (missing.length > 0 && typeof client.sendCommand === 'function') {
      return 'client is a node-redis client: use createNodeRedisCoordinator from @flight/redis-node, or pass an ioredis Redis or Cluster';
    }
    return undefined;
  },
};

/**
 * The flight coordinator on Redis through ioredis. Pass your `Redis` or `Cluster` client (it is not
 * closed by `close()`; one duplicate connection is opened for notifications while followers wait —
 * one per master on a Cluster), or `redis` options. Needs Redis >= 7.0.
 */
export function createIoredisCoordinator(options: IoredisCoordinatorOptions): RedisCoordinator & FlightCoordinator {
  assertConnectionOptions('createIoredisCoordinator', options, IOREDIS, COORDINATOR_OPTION_NAMES);
  const { client, redis, ...rest } = options;
  return createRedisCoordinator(createIoredisDriver(client ? { client } : { redis: redis! }), rest);
}

/** The session lock on Redis through ioredis (token-checked acquire/release/renew). */
export function createIoredisSessionLock(options: IoredisSessionLockOptions): RedisSessionLock {
  assertConnectionOptions('createIoredisSessionLock', options, IOREDIS, SESSION_LOCK_OPTION_NAMES);
  const { client, redis, ...rest } = options;
  return createRedisSessionLock(createIoredisDriver(client ? { client } : { redis: redis! }), rest);
}

export type {
  RedisCoordinator,
  RedisCoordinatorOptions,
  RedisSessionLock,
  RedisSessionLockOptions,
  WaitReplicasOptions,
} from '@flight/redis-scripts';
export { FlightRedisVersionError, type NotificationCounters } from '@flight/redis-scripts';
