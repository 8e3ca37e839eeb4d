/**
 * @flight/redis-node — the Redis coordinator and session lock of @flight, bound to node-redis
 * (`redis` 5 or 6; a client from `createClient` or `createCluster`). Only the driver lives here:
 * scripts, keys, deadlines, error mapping and notifications are shared with @flight/redis-ioredis.
 */
import type { FlightCoordinator } from '@flight/core';
import {
  assertConnectionOptions,
  COORDINATOR_OPTION_NAMES,
  DEFAULT_COMMAND_TIMEOUT_MS,
  SESSION_LOCK_OPTION_NAMES,
  closeWithin,
  type ClientLibrary,
  clusterKeySlot,
  createRedisCoordinator,
  createRedisSessionLock,
  type RedisCoordinator,
  type RedisCoordinatorOptions,
  type RedisDriver,
  type RedisSubscriber,
  type RedisSessionLock,
  type RedisSessionLockOptions,
} from '@flight/redis-scripts';
import { createClient, RESP_TYPES, type RedisClientOptions } from 'redis';

interface Closable {
  connect(): Promise<unknown>;
  sSubscribe(channels: string[], listener: (message: string, channel: string) => unknown): Promise<unknown>;
  sUnsubscribe(channels: string[], listener?: (message: string, channel: string) => unknown): Promise<unknown>;
  on(event: string, listener: (...args: any[]) => void): unknown;
  close?(): Promise<void>;
  quit?(): Promise<unknown>;
  destroy?(): void;
}

/** The part of a node-redis client (`createClient`) used here. Structural: `redis` 5 and 6 both fit. */
export interface NodeRedisClient extends Closable {
  sendCommand(args: (string | Buffer)[], options?: object): Promise<unknown>;
  duplicate(overrides?: { RESP?: 2 | 3 }): Closable & Pick<NodeRedisClient, 'sendCommand'>;
  readonly options?: { database?: number } | undefined;
}

/** The part of a node-redis cluster client (`createCluster`) used here. */
export interface NodeRedisCluster extends Closable {
  sendCommand(firstKey: string | undefined, isReadonly: boolean | undefined, args: (string | Buffer)[], options?: object): Promise<unknown>;
  duplicate(): Closable;
  readonly masters: unknown;
}

/** Where to connect: the user's own connected client (kept open on close), or options to create one (closed on close). */
export type NodeRedisConnection =
  { client: NodeRedisClient | NodeRedisCluster; redis?: never } | { redis: RedisClientOptions; client?: never };

export type NodeRedisCoordinatorOptions = NodeRedisConnection & RedisCoordinatorOptions;
export type NodeRedisSessionLockOptions = NodeRedisConnection & RedisSessionLockOptions;

function closeQuietly(client: Closable): Promise<void> {
  return closeWithin(
    1000,
    async () => (client.close ? client.close() : client.quit?.()),
    () => client.destroy?.(),
  );
}

/** The address of the master holding `key`'s slot, as the cluster client last learnt it. */
function masterOf(cluster: NodeRedisCluster, key: string): string | undefined {
  const shard = (cluster as { slots?: ({ master?: { address?: string } } | undefined)[] }).slots?.[clusterKeySlot(key)];
  return shard?.master?.address;
}

function isCluster(client: NodeRedisClient | NodeRedisCluster): client is NodeRedisCluster {
  return 'masters' in client;
}

/** Command options that give bulk replies as Buffers (a result stored as bytes). */
const BULK_AS_BUFFERS = { typeMapping: { [RESP_TYPES.BLOB_STRING]: Buffer } };

/** Delay between retries of a `TRYAGAIN` reply (a slot mid-migration). */
const TRYAGAIN_RETRY_DELAY_MS = 50;

/** Builds the `RedisDriver` of `@flight/redis-scripts` over a node-redis client or cluster. */
export function createNodeRedisDriver(
  connection: NodeRedisConnection,
  /** How long a `TRYAGAIN` is retried; the coordinator passes its command deadline. */
  tryAgainWindowMs: number = DEFAULT_COMMAND_TIMEOUT_MS,
): RedisDriver {
  let client: NodeRedisClient | NodeRedisCluster;
  let ready: Promise<unknown> = Promise.resolve();
  const owned = !connection.client;
  if (connection.client) {
    client = connection.client;
  } else {
    const created = createClient(connection.redis) as unknown as NodeRedisClient;
    created.on('error', () => undefined); // reconnects on its own; calls fail by their deadline
    ready = created.connect();
    ready.catch(() => undefined);
    client = created;
  }
  let subscriber: RedisSubscriber | undefined;
  const cluster = isCluster(client);

  /** Connected (or given a client): commands go out without waiting on `ready` first. */
  let connected = owned === false;
  ready.then(
    () => (connected = true),
    () => undefined,
  );
  const send = (routingKey: string | undefined, args: (string | Buffer)[], options?: object): Promise<unknown> =>
    connected ? sendNow(routingKey, args, options) : ready.then(() => sendNow(routingKey, args, options));
  const sendNow = (routingKey: string | undefined, args: (string | Buffer)[], options?: object): Promise<unknown> => {
    if (isCluster(client)) return sendToCluster(client, routingKey, args, options);
    try {
      return client.sendCommand(args, options);
    } catch (error) {
      return Promise.reject(error);
    }
  };
  const sendToCluster = async (
    nodes: NodeRedisCluster,
    routingKey: string | undefined,
    args: (string | Buffer)[],
    options?: object,
  ): Promise<unknown> => {
    // A slot being migrated answers TRYAGAIN to a multi-key script whose keys are split between the two
    // nodes; node-redis passes it through (ioredis retries it), so retry here until the migration ends.
    const retryUntil = Date.now() + tryAgainWindowMs;
    for (;;) {
      try {
        return await nodes.sendCommand(routingKey, false, args, options);
      } catch (error) {
        if (!String((error as Error)?.message).startsWith('TRYAGAIN') || Date.now() >= retryUntil) throw error;
        await new Promise((resolve) => setTimeout(resolve, TRYAGAIN_RETRY_DELAY_MS));
      }
    }
  };
  /** `EVALSHA sha numkeys keys… args…` (or EVAL) as one array. */
  const scriptCommand = (command: 'EVALSHA' | 'EVAL', head: string, keys: readonly string[], args: readonly (string | Buffer)[]) => [
    command,
    head,
    String(keys.length),
    ...keys,
    ...args,
  ];

  return {
    db: cluster
      ? 0
      : ((client as NodeRedisClient).options?.database ?? (connection.redis as { database?: number } | undefined)?.database ?? 0),
    evalsha: (sha, keys, args) => send(keys[0], scriptCommand('EVALSHA', sha, keys, args)),
    eval: (source, keys, args) => send(keys[0], scriptCommand('EVAL', source, keys, args)),
    setIfAbsent: (key, value, ttlMs, expireAtMs) =>
      send(
        key,
        expireAtMs === undefined
          ? ['SET', key, value, 'PX', String(ttlMs), 'NX', 'GET']
          : ['SET', key, value, 'PXAT', String(expireAtMs), 'NX', 'GET'],
      ) as Promise<string | null>,
    setIfEqual: (key, value, ttlMs, expected) =>
      send(key, ['SET', key, value, 'PX', String(ttlMs), 'IFEQ', expected]).then((reply) => reply === 'OK'),
    getBuffer: (key) => send(key, ['GET', key], BULK_AS_BUFFERS) as Promise<Buffer | null>,
    // A cluster: each master's own clock (see RedisDriver.clockOf).
    ...(cluster ? { clockOf: (key: string) => masterOf(client as NodeRedisCluster, key) } : {}),
    createSubscriber(handlers) {
      // One duplicate for the coordinator's life, connected on first use. node-redis re-subscribes by
      // itself after a reconnect and emits 'ready' only once that is done; on a cluster it keeps one
      // sharded subscriber per master and routes each SSUBSCRIBE by its channel's slot. Standalone, the
      // duplicate speaks RESP3, so it also runs the re-read a follower sends right behind its SSUBSCRIBE.
      const sub = cluster ? client.duplicate() : (client as NodeRedisClient).duplicate({ RESP: 3 });
      let readyOnce = false;
      // Reconnects on its own; waiters fall back to polling, and forget listeners stop trusting what they hold.
      sub.on('error', () => handlers.onDisconnect?.());
      sub.on('end', () => handlers.onDisconnect?.());
      sub.on('ready', () => {
        if (readyOnce) handlers.onReconnect();
        readyOnce = true;
      });
      const listener = (message: string, channel: string) => handlers.onMessage(channel, message);
      let closing = false;
      const connected = (async () => {
        await ready;
        if (closing) throw new Error('subscriber closed');
        await sub.connect();
      })();
      connected.catch(() => undefined);
      /**
       * Every command of the subscriber is handed to node-redis in call order (reactions to one promise run
       * in the order they were added), so a script passed after a subscribe is written after its SSUBSCRIBE.
       */
      const inOrder = <T>(send: () => Promise<T>): Promise<T> => connected.then(send);
      const runScriptCommand = (args: (string | Buffer)[]) =>
        inOrder(() => (sub as ReturnType<NodeRedisClient['duplicate']>).sendCommand(args));
      const handle: RedisSubscriber = {
        subscribe(channels) {
          // A cluster routes one command by its first channel: one command per channel there.
          if (cluster)
            return inOrder(() => Promise.all(channels.map((channel) => sub.sSubscribe([channel], listener)))).then(() => undefined);
          return inOrder(() => sub.sSubscribe([...channels], listener)).then(() => undefined);
        },
        unsubscribe(channels) {
          if (cluster)
            return inOrder(() => Promise.all(channels.map((channel) => sub.sUnsubscribe([channel], listener)))).then(() => undefined);
          return inOrder(() => sub.sUnsubscribe([...channels], listener)).then(() => undefined);
        },
        ...(cluster
          ? {}
          : {
              scripts: {
                evalsha: (sha, keys, args) => runScriptCommand(scriptCommand('EVALSHA', sha, keys, args)),
                eval: (source, keys, args) => runScriptCommand(scriptCommand('EVAL', source, keys, args)),
              },
              ping: () => runScriptCommand(['PING']),
            }),
        async close() {
          closing = true;
          if (subscriber === handle) subscriber = undefined;
          await closeQuietly(sub);
        },
      };
      subscriber = handle;
      return handle;
    },
    // On a cluster, the routing key sends WAIT to the master that serves the flight's slot.
    waitReplicas: async (key, replicas, timeoutMs) => Number(await send(key, ['WAIT', String(replicas), String(timeoutMs)])),
    async close() {
      await subscriber?.close();
      if (owned) await closeQuietly(client);
    },
  };
}

/** What the factories check a `client` against (see `assertConnectionOptions`). */
const NODE_REDIS: ClientLibrary = {
  name: 'redis',
  clientHint: 'your connected node-redis createClient() or createCluster()',
  methods: ['sendCommand', 'duplicate', 'sSubscribe', 'on'],
  problemOf(client, missing) {
    if (missing.length > 0 && typeof client.call === 'function' && typeof client.callBuffer === 'function') {
      return 'client is an ioredis client: use createIoredisCoordinator from @flight/redis-ioredis, or pass a node-redis client';
    }
    if (missing.length === 0 && client.isOpen === false) {
      return 'client is not connected: call `await client.connect()` before creating the coordinator, or pass { redis } and it connects its own';
    }
    return undefined;
  },
};

/**
 * The flight coordinator on Redis through node-redis. Pass your connected `createClient()` or
 * `createCluster()` client (it is not closed by `close()`; one duplicate connection is opened for
 * notifications while followers wait — one per master on a cluster), or `redis` client options.
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

export type { RedisCoordinator, RedisCoordinatorOptions, RedisSessionLock, RedisSessionLockOptions } from '@flight/redis-scripts';
export { FlightRedisVersionError, type NotificationCounters } from '@flight/redis-scripts';
