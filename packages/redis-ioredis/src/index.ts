/**
 * @flight/redis-ioredis — the Redis coordinator and session lock of @flight, bound to ioredis 5 or 6
 * (standalone `Redis` or `Cluster`). Only the driver lives here: scripts, keys, deadlines, error
 * mapping and notifications are shared with @flight/redis-node.
 */
import type { FlightCoordinator } from '@flight/core';
import {
  assertConnectionOptions,
  closeWithin,
  COORDINATOR_OPTION_NAMES,
  SESSION_LOCK_OPTION_NAMES,
  type ClientLibrary,
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
  /** `call` with bulk replies as Buffers (ioredis 5 and 6 both have it). */
  callBuffer(command: string, ...args: (string | number | Buffer)[]): Promise<unknown>;
  duplicate(...overrides: any[]): IoredisClient;
  ssubscribe(...channels: string[]): Promise<unknown>;
  sunsubscribe(...channels: string[]): Promise<unknown>;
  on(event: string, listener: (...args: any[]) => void): unknown;
  quit(): Promise<unknown>;
  disconnect(): void;
  readonly isCluster?: boolean;
  readonly options?: object;
}

/** The socket of a standalone ioredis client, as far as the driver uses it. */
interface CorkableStream {
  readonly writable?: boolean;
  cork(): void;
  uncork(): void;
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
  const isCluster = client.isCluster === true;
  let subscriber: IoredisClient | undefined;

  /**
   * Flight commands sent in one turn of the event loop leave in one socket write: the connection is corked
   * at the first and uncorked by `setImmediate`, once the I/O callbacks of this turn have run (ioredis
   * writes each command on its own otherwise; node-redis batches the same way by itself). An HTTP server
   * handles each request in a callback of its own: uncorked on the next tick, every request paid its own
   * write system calls. Standalone only (a Cluster client writes to one connection per node).
   */
  let corked: CorkableStream | undefined;
  const uncork = () => {
    const stream = corked;
    corked = undefined;
    stream?.uncork();
  };
  function corkForThisTurn(): void {
    if (corked || isCluster) return;
    const stream = (client as { stream?: CorkableStream }).stream;
    if (!stream?.writable) return;
    corked = stream;
    stream.cork();
    setImmediate(uncork);
  }

  /** On a cluster, the `host:port` of the master holding `key`'s slot (`slots` lists each slot's master first). */
  const masterOf = (key: string): string | undefined => (client as unknown as ClusterShape).slots[clusterKeySlot(key)]?.[0];

  /** On a cluster, one SSUBSCRIBE per slot (ioredis routes each command by its channels' slot). */
  function bySlot(channels: readonly string[]): string[][] {
    if (!isCluster) return [[...channels]];
    const groups = new Map<number, string[]>();
    for (const channel of channels) {
      const slot = clusterKeySlot(channel);
      const group = groups.get(slot);
      if (group) group.push(channel);
      else groups.set(slot, [channel]);
    }
    return [...groups.values()];
  }

  return {
    db: isCluster ? 0 : ((client.options as { db?: number } | undefined)?.db ?? 0),
    evalsha: (sha, keys, args) => {
      corkForThisTurn();
      return client.call('EVALSHA', sha, keys.length, ...keys, ...args);
    },
    eval: (source, keys, args) => client.call('EVAL', source, keys.length, ...keys, ...args),
    setIfAbsent: (key, value, ttlMs, expireAtMs) => {
      corkForThisTurn();
      return (
        expireAtMs === undefined
          ? client.call('SET', key, value, 'PX', ttlMs, 'NX', 'GET')
          : client.call('SET', key, value, 'PXAT', expireAtMs, 'NX', 'GET')
      ) as Promise<string | null>;
    },
    setIfEqual: (key, value, ttlMs, expected) => {
      corkForThisTurn();
      return client.call('SET', key, value, 'PX', ttlMs, 'IFEQ', expected).then((reply) => reply === 'OK');
    },
    getBuffer: (key) => client.callBuffer('GET', key) as Promise<Buffer | null>,
    // A cluster: each master's own clock (see RedisDriver.clockOf).
    ...(isCluster ? { clockOf: masterOf } : {}),
    createSubscriber(handlers) {
      // One duplicate for the coordinator's life. Standalone: it queues commands while it connects, and
      // does not re-subscribe by itself (ioredis would emit 'ready' before re-subscribing): the
      // coordinator re-subscribes on 'ready' and counts a wait covered only once that is confirmed.
      // No ready check: ioredis writes an SSUBSCRIBE issued while the connection is between 'connect' and
      // 'ready' at once (pub/sub commands may run while Redis loads), ahead of the check's INFO, which a
      // subscribed RESP2 connection refuses; the failed check then dropped the connection and the
      // subscriptions it had confirmed.
      // Cluster: sharded subscribers, one connection per master, re-subscribed by ioredis per shard.
      const sub = isCluster
        ? client.duplicate([], { shardedSubscribers: true })
        : client.duplicate({ enableOfflineQueue: true, autoResubscribe: false, enableReadyCheck: false });
      subscriber = sub;
      // Every 'ready' but the first re-subscribes, and so does the first when a connection closed before
      // it: that connection may have confirmed subscriptions that are gone now.
      let readyOnce = false;
      let closedBeforeReady = false;
      // Reconnects on its own; waiters fall back to polling, and forget listeners stop trusting what they hold.
      sub.on('error', () => handlers.onDisconnect?.());
      sub.on('close', () => {
        closedBeforeReady = !readyOnce;
        handlers.onDisconnect?.();
      });
      sub.on(isCluster ? 'subscribersReady' : 'ready', () => {
        if (readyOnce || closedBeforeReady) handlers.onReconnect();
        readyOnce = true;
      });
      sub.on('smessage', (channel: string, message: string) => handlers.onMessage(channel, message));
      return {
        async subscribe(channels) {
          await Promise.all(bySlot(channels).map((group) => sub.ssubscribe(...group)));
        },
        async unsubscribe(channels) {
          await Promise.all(bySlot(channels).map((group) => sub.sunsubscribe(...group)));
        },
        // Standalone: PING is allowed on a subscribed connection and answered after every message before it.
        ...(isCluster ? {} : { ping: () => sub.call('PING') }),
        async close() {
          if (subscriber === sub) subscriber = undefined;
          await closeWithin(
            1000,
            () => sub.quit(),
            () => sub.disconnect(),
          );
        },
      };
    },
    async waitReplicas(key, replicas, timeoutMs) {
      if (!isCluster) return Number(await client.call('WAIT', replicas, timeoutMs));
      const nodeKey = masterOf(key);
      const node = (client as unknown as ClusterShape).nodes('master').find((n) => `${n.options.host}:${n.options.port}` === nodeKey);
      if (!node) return 0;
      return Number(await node.call('WAIT', replicas, timeoutMs));
    },
    async close() {
      const sub = subscriber;
      subscriber = undefined;
      if (sub)
        await closeWithin(
          1000,
          () => sub.quit(),
          () => sub.disconnect(),
        );
      if (owned)
        await closeWithin(
          1000,
          () => client.quit(),
          () => client.disconnect(),
        );
    },
  };
}

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

export type { RedisCoordinator, RedisCoordinatorOptions, RedisSessionLock, RedisSessionLockOptions } from '@flight/redis-scripts';
export { FlightRedisVersionError, type NotificationCounters } from '@flight/redis-scripts';
