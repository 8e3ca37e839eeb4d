/**
 * The one place that decides where flights are coordinated: Redis through `@flight/redis-ioredis`
 * when a REDIS_URL is configured, else the embedded in-memory coordinator (one process only).
 */
import { createMemoryCoordinator, createMemorySessionLock } from '@flight/core';
import { type FlightLogger, type SessionLock } from '@flight/core/adapter';
import type { FlightLister } from '@flight/dashboard';
import { createIoredisCoordinator, createIoredisSessionLock } from '@flight/redis-ioredis';
import type { StreamCoordinator } from '@flight/resumable-stream/generic';
import { Redis } from 'ioredis';

export interface Coordination {
  kind: 'redis' | 'memory';
  /** Why this kind was chosen, for the startup log and the dashboard. */
  reason: string;
  /** Its flight records are readable (both kinds are): the resumable streams ask whether a stream exists. */
  coordinator: StreamCoordinator;
  /** Lists the flights shared in Redis, for the mounted dashboard (none in memory). */
  inspector?: FlightLister;
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
  /** Deadline of every Redis call. @default 1000 */
  commandTimeoutMs?: number;
  logger: FlightLogger;
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
  const client = new Redis(url, {
    // While Redis is away a command fails after one reconnection attempt (hybrid mode falls back on
    // the error) and the client keeps reconnecting. The offline queue stays on: the coordinator's
    // subscriber connection (a duplicate of this client) subscribes while it is still connecting.
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
    if (ready)
      options.logger.warn({ redis: url }, 'redis connection lost: coordination fails over to the local single-flight (hybrid mode)');
    ready = false;
  });
  client.on('error', () => {
    // Reported through 'close' and the coordinator's own errors; without a listener ioredis prints them.
  });
  await client.connect().catch((error: Error) => {
    options.logger.warn({ redis: url, err: error.message }, 'redis not reachable at startup; will keep retrying');
  });
  const prefix = options.prefix ?? 'flight:demo';
  // Every Redis call settles within this deadline (then FlightCoordinationError → local fallback).
  const commandTimeoutMs = options.commandTimeoutMs ?? 1000;
  const coordinator = createIoredisCoordinator({ client, prefix, commandTimeoutMs });
  return {
    kind: 'redis',
    reason: `redis ${url} (prefix ${prefix})`,
    coordinator,
    inspector: coordinator,
    sessionLock: createIoredisSessionLock({ client, prefix, commandTimeoutMs }),
    connected: () => ready,
    async close() {
      await coordinator.close().catch(() => {});
      client.disconnect();
    },
  };
}
