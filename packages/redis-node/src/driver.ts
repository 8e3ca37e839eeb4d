/** The `RedisDriver` of `@flight/redis-scripts` over a node-redis client or cluster: commands, the subscriber, close. */
import { clusterKeySlot, DEFAULT_COMMAND_TIMEOUT_MS, type RedisDriver, type RedisSubscriber } from '@flight/redis-scripts';
import { createClient, RESP_TYPES, type RedisClientOptions } from 'redis';
import { closeQuietly, isCluster, isSentinel, type AnyNodeRedisClient, type NodeRedisClient, type NodeRedisCluster } from './client';
import { createSender, scriptCommand } from './commands';
import { watchPrimarySwitch } from './primary-switch';
import { createSentinelSubscriber } from './sentinel-subscriber';
import { createNodeRedisSubscriber } from './subscriber';

/** Where to connect: the user's own connected client (kept open on close), or options to create one (closed on close). */
export type NodeRedisConnection = { client: AnyNodeRedisClient; redis?: never } | { redis: RedisClientOptions; client?: never };

/** The address of the master holding `key`'s slot, as the cluster client last learnt it. */
function masterOf(cluster: NodeRedisCluster, key: string): string | undefined {
  const shard = (cluster as { slots?: ({ master?: { address?: string } } | undefined)[] }).slots?.[clusterKeySlot(key)];
  return shard?.master?.address;
}

/** Command options that give bulk replies as Buffers (a result stored as bytes). */
const BULK_AS_BUFFERS = { typeMapping: { [RESP_TYPES.BLOB_STRING]: Buffer } };

/** The client to use: the given one, or one created and connecting (`ready`), closed with the driver. */
function clientOf(connection: NodeRedisConnection): { client: AnyNodeRedisClient; ready?: Promise<unknown> } {
  if (connection.client) return { client: connection.client };
  const created = createClient(connection.redis) as unknown as NodeRedisClient;
  created.on('error', () => undefined); // reconnects on its own; calls fail by their deadline
  const ready = created.connect();
  ready.catch(() => undefined);
  return { client: created, ready };
}

/** Builds the `RedisDriver` of `@flight/redis-scripts` over a node-redis client or cluster. */
export function createNodeRedisDriver(
  connection: NodeRedisConnection,
  /** How long a `TRYAGAIN` is retried; the coordinator passes its command deadline. */
  tryAgainWindowMs: number = DEFAULT_COMMAND_TIMEOUT_MS,
): RedisDriver {
  const { client, ready } = clientOf(connection);
  const owned = ready !== undefined;
  const cluster = isCluster(client);
  const sentinel = isSentinel(client);
  // Through Sentinels: no command goes to a primary another Sentinel announced replaced.
  const primarySwitch = sentinel ? watchPrimarySwitch(client) : undefined;
  const send = createSender(client, ready, tryAgainWindowMs, primarySwitch);
  let subscriber: RedisSubscriber | undefined;

  return {
    // A Sentinel client does not tell its database: the notice channels name database 0.
    db:
      cluster || sentinel
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
    ...(cluster ? { clockOf: (key: string) => masterOf(client, key) } : {}),
    createSubscriber(handlers) {
      const onClose = () => {
        if (subscriber === handle) subscriber = undefined;
      };
      const handle: RedisSubscriber = sentinel
        ? createSentinelSubscriber(client, handlers, onClose)
        : createNodeRedisSubscriber(client, ready ?? Promise.resolve(), handlers, onClose);
      subscriber = handle;
      return handle;
    },
    async *scan(pattern, count) {
      const nodes: Pick<NodeRedisClient, 'sendCommand'>[] = cluster
        ? await Promise.all(client.masters.map((master) => client.nodeClient(master)))
        : [{ sendCommand: (args) => send(undefined, args) }];
      for (const node of nodes) {
        let cursor = '0';
        do {
          const [next, keys] = (await node.sendCommand(['SCAN', cursor, 'MATCH', pattern, 'COUNT', String(count)])) as [string, string[]];
          cursor = String(next);
          if (keys.length > 0) yield keys.map(String);
        } while (cursor !== '0');
      }
    },
    // On a cluster, the routing key sends WAIT to the master that serves the flight's slot.
    waitReplicas: async (key, replicas, timeoutMs) => Number(await send(key, ['WAIT', String(replicas), String(timeoutMs)])),
    async close() {
      await Promise.all([subscriber?.close(), primarySwitch?.close()]);
      if (owned) await closeQuietly(client);
    },
  };
}
