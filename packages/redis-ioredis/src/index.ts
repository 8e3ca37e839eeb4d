/**
 * @flight/redis-ioredis — the Redis coordinator and session lock of @flight, bound to ioredis 5 or 6
 * (standalone `Redis` or `Cluster`). Only the driver lives here: scripts, keys, deadlines, error
 * mapping and notifications are shared with @flight/redis-node.
 */
import type { FlightCoordinator } from '@flight/core';
import {
  closeWithin,
  clusterKeySlot,
  createRedisCoordinator,
  createRedisSessionLock,
  type RedisCoordinator,
  type RedisCoordinatorOptions,
  type RedisDriver,
  type RedisSessionLock,
  type RedisSessionLockOptions,
} from '@flight/redis-scripts';
import { Redis, type RedisOptions } from 'ioredis';

/** The part of an ioredis `Redis` or `Cluster` client used here (structural: ioredis 5 and 6 both fit). */
export interface IoredisClient {
  call(command: string, ...args: (string | number | Buffer)[]): Promise<unknown>;
  duplicate(...overrides: any[]): IoredisClient;
  subscribe(...channels: string[]): Promise<unknown>;
  on(event: string, listener: (...args: any[]) => void): unknown;
  quit(): Promise<unknown>;
  disconnect(): void;
  readonly isCluster?: boolean;
}

interface ClusterShape {
  slots: string[][];
  nodes(role: 'master'): { options: { host?: string; port?: number }; call: IoredisClient['call'] }[];
}

/** Where to connect: the user's own client (kept open on close), or options to create one (closed on close). */
export type IoredisConnection = { client: IoredisClient; redis?: never } | { redis: RedisOptions | string; client?: never };

export type IoredisCoordinatorOptions = IoredisConnection & RedisCoordinatorOptions;
export type IoredisSessionLockOptions = IoredisConnection & RedisSessionLockOptions;

/** Builds the `RedisDriver` of `@flight/redis-scripts` over an ioredis client. */
export function createIoredisDriver(connection: IoredisConnection): RedisDriver {
  const owned = !connection.client;
  const client: IoredisClient = connection.client ?? (new Redis(connection.redis as RedisOptions) as unknown as IoredisClient);
  // A client of our own: it reconnects by itself, and calls fail by their deadline meanwhile.
  if (owned) client.on('error', () => undefined);
  const subscribers = new Set<IoredisClient>();
  const isCluster = client.isCluster === true;

  const evalArgs = (head: string, keys: readonly string[], args: readonly string[]) => [head, keys.length, ...keys, ...args];

  return {
    isCluster,
    evalsha: (sha, keys, args) => client.call('EVALSHA', ...evalArgs(sha, keys, args)),
    eval: (source, keys, args) => client.call('EVAL', ...evalArgs(source, keys, args)),
    async subscribe(channel, handlers) {
      // The subscriber must queue its SUBSCRIBE while it connects, whatever the user's client allows.
      const sub = isCluster ? client.duplicate() : client.duplicate({ enableOfflineQueue: true });
      subscribers.add(sub);
      let ready = false;
      sub.on('error', () => undefined); // reconnects on its own; waiters fall back to their timeouts
      sub.on('ready', () => {
        if (ready) handlers.onReconnect();
      });
      sub.on('message', (from: string, message: string) => {
        if (from === channel) handlers.onMessage(message);
      });
      try {
        await sub.subscribe(channel);
      } catch (error) {
        subscribers.delete(sub);
        sub.disconnect();
        throw error;
      }
      ready = true;
      return {
        async close() {
          subscribers.delete(sub);
          await closeWithin(1000, () => sub.quit(), () => sub.disconnect());
        },
      };
    },
    async waitReplicas(key, replicas, timeoutMs) {
      if (!isCluster) return Number(await client.call('WAIT', replicas, timeoutMs));
      const cluster = client as unknown as ClusterShape;
      const nodeKey = cluster.slots[clusterKeySlot(key)]?.[0];
      const node = cluster.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === nodeKey);
      if (!node) return 0;
      return Number(await node.call('WAIT', replicas, timeoutMs));
    },
    async close() {
      await Promise.all([...subscribers].map((sub) => closeWithin(1000, () => sub.quit(), () => sub.disconnect())));
      subscribers.clear();
      if (owned) await closeWithin(1000, () => client.quit(), () => client.disconnect());
    },
  };
}

/**
 * The flight coordinator on Redis through ioredis. Pass your `Redis` or `Cluster` client (it is not
 * closed by `close()`; one duplicate connection is opened for notifications), or `redis` options.
 */
export function createIoredisCoordinator(options: IoredisCoordinatorOptions): RedisCoordinator & FlightCoordinator {
  const { client, redis, ...rest } = options;
  return createRedisCoordinator(createIoredisDriver(client ? { client } : { redis: redis! }), rest);
}

/** The session lock on Redis through ioredis (token-checked acquire/release/renew). */
export function createIoredisSessionLock(options: IoredisSessionLockOptions): RedisSessionLock {
  const { client, redis, ...rest } = options;
  return createRedisSessionLock(createIoredisDriver(client ? { client } : { redis: redis! }), rest);
}

export type { RedisCoordinator, RedisCoordinatorOptions, RedisSessionLock, RedisSessionLockOptions } from '@flight/redis-scripts';
