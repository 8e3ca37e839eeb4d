/** The `RedisDriver` of `@flight/redis-scripts` over an ioredis client: commands, the subscriber, close. */
import { closeWithin, clusterKeySlot, type RedisDriver, type RedisSubscriber } from '@flight/redis-scripts';
import { Redis, type RedisOptions } from 'ioredis';
import type { ClusterShape, CorkableStream, IoredisClient } from './client';
import { watchPrimarySwitch } from './primary-switch';
import { createIoredisSubscriber } from './subscriber';

/** Where to connect: the user's own client (kept open on close), or options to create one (closed on close). */
export type IoredisConnection = { client: IoredisClient; redis?: never } | { redis: RedisOptions | string; client?: never };

/**
 * Flight commands sent in one turn of the event loop leave in one socket write: the connection is corked
 * at the first and uncorked by `setImmediate`, once the I/O callbacks of this turn have run (ioredis
 * writes each command on its own otherwise; node-redis batches the same way by itself). An HTTP server
 * handles each request in a callback of its own: uncorked on the next tick, every request paid its own
 * write system calls. Standalone only (a Cluster client writes to one connection per node).
 */
function turnCorker(client: IoredisClient, isCluster: boolean): () => void {
  let corked: CorkableStream | undefined;
  const uncork = () => {
    const stream = corked;
    corked = undefined;
    stream?.uncork();
  };
  return function corkForThisTurn() {
    if (corked || isCluster) return;
    const stream = (client as { stream?: CorkableStream }).stream;
    if (!stream?.writable) return;
    corked = stream;
    stream.cork();
    setImmediate(uncork);
  };
}

/** Builds the `RedisDriver` of `@flight/redis-scripts` over an ioredis client. */
export function createIoredisDriver(connection: IoredisConnection): RedisDriver {
  const owned = !connection.client;
  const client: IoredisClient = connection.client ?? (new Redis(connection.redis as RedisOptions) as unknown as IoredisClient);
  // A client of our own: it reconnects by itself, and calls fail by their deadline meanwhile.
  if (owned) client.on('error', () => undefined);
  const isCluster = client.isCluster === true;
  const corkForThisTurn = turnCorker(client, isCluster);
  // Through Sentinels: connections still on a replaced primary are moved to the promoted one.
  const primarySwitch = watchPrimarySwitch(client);
  let subscriber: RedisSubscriber | undefined;

  /** On a cluster, the `host:port` of the master holding `key`'s slot (`slots` lists each slot's master first). */
  const masterOf = (key: string): string | undefined => (client as unknown as ClusterShape).slots[clusterKeySlot(key)]?.[0];

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
      const handle: RedisSubscriber = createIoredisSubscriber(client, isCluster, handlers, primarySwitch, () => {
        if (subscriber === handle) subscriber = undefined;
      });
      subscriber = handle;
      return handle;
    },
    async *scan(pattern, count) {
      // A new Cluster client knows its masters once connected: any command waits for that.
      if (isCluster) await client.call('PING');
      const nodes: Pick<IoredisClient, 'call'>[] = isCluster ? (client as unknown as ClusterShape).nodes('master') : [client];
      for (const node of nodes) {
        let cursor = '0';
        do {
          const [next, keys] = (await node.call('SCAN', cursor, 'MATCH', pattern, 'COUNT', count)) as [string, string[]];
          cursor = next;
          if (keys.length > 0) yield keys;
        } while (cursor !== '0');
      }
    },
    async waitReplicas(key, replicas, timeoutMs) {
      if (!isCluster) return Number(await client.call('WAIT', replicas, timeoutMs));
      const nodeKey = masterOf(key);
      const node = (client as unknown as ClusterShape).nodes('master').find((n) => `${n.options.host}:${n.options.port}` === nodeKey);
      if (!node) return 0;
      return Number(await node.call('WAIT', replicas, timeoutMs));
    },
    async close() {
      await Promise.all([subscriber?.close(), primarySwitch?.close()]);
      if (owned)
        await closeWithin(
          1000,
          () => client.quit(),
          () => client.disconnect(),
        );
    },
  };
}
