/**
 * The one place that decides where flights are coordinated: Redis through `@flight/redis-ioredis`
 * when a REDIS_URL is configured, else the embedded in-memory coordinator (one process only).
 */
import { createMemoryCoordinator, createMemorySessionLock, type FlightCoordinator, type FlightLogger, type SessionLock } from '@flight/core';
import * as ioredisAdapter from '@flight/redis-ioredis';
import { Redis } from 'ioredis';

export interface Coordination {
  kind: 'redis' | 'memory';
  /** Why this kind was chosen, for the startup log and the dashboard. */
  reason: string;
  coordinator: FlightCoordinator;
  sessionLock: SessionLock;
  /** True while the Redis connection is ready (always true in memory). */
  connected(): boolean;
  close(): Promise<void>;
}

export interface CoordinationOptions {
  /** `redis://…`, or empty / `memory` for the in-memory coordinator. */
  redisUrl?: string | undefined;
  /** Key prefix of this app's flights in Redis. @default 'flight:demo' */
  prefix?: string;
  logger: FlightLogger;
}

type AdapterApi = {
  createIoredisCoordinator?: (options: { client: Redis; prefix?: string }) => FlightCoordinator;
  createIoredisSessionLock?: (options: { client: Redis; prefix?: string }) => SessionLock;
};

/** True when `@flight/redis-ioredis` exports the coordinator and the session lock. */
export function redisAdapterAvailable(): boolean {
  const api = ioredisAdapter as AdapterApi;
  return typeof api.createIoredisCoordinator === 'function' && typeof api.createIoredisSessionLock === 'function';
}

function memory(reason: string): Coordination {
  return {
    kind: 'memory',
    reason,
    coordinator: createMemoryCoordinator(),
    sessionLock: createMemorySessionLock(),
    connected: () => true,
    close: async () => {},
  };
}

export async function createCoordination(options: CoordinationOptions): Promise<Coordination> {
  const url = options.redisUrl?.trim();
  if (!url || url === 'memory') return memory('no REDIS_URL: in-memory coordinator, this process only');
  if (!redisAdapterAvailable()) return memory('@flight/redis-ioredis does not export its coordinator yet: in-memory coordinator, this process only');
  const api = ioredisAdapter as Required<AdapterApi>;
  const client = new Redis(url, {
    // Fail fast while Redis is away (hybrid mode falls back on the error) and keep reconnecting.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    lazyConnect: true,
    retryStrategy: (attempt) => Math.min(200 * attempt, 1000),
  });
  let ready = false;
  client.on('ready', () => {
    if (!ready) options.logger.info({ redis: url }, 'redis connected: distributed coordination');
    ready = true;
  });
  client.on('end', () => (ready = false));
  client.on('close', () => {
    if (ready) options.logger.warn({ redis: url }, 'redis connection lost: coordination fails over to the local single-flight (hybrid mode)');
    ready = false;
  });
  client.on('error', () => {
    // Reported through 'close' and the coordinator's own errors; without a listener ioredis prints them.
  });
  await client.connect().catch((error: Error) => {
    options.logger.warn({ redis: url, err: error.message }, 'redis not reachable at startup; will keep retrying');
  });
  const prefix = options.prefix ?? 'flight:demo';
  return {
    kind: 'redis',
    reason: `redis ${url} (prefix ${prefix})`,
    coordinator: api.createIoredisCoordinator({ client, prefix }),
    sessionLock: api.createIoredisSessionLock({ client, prefix }),
    connected: () => ready,
    async close() {
      client.disconnect();
    },
  };
}
