/**
 * Per-master figures of a Redis Cluster for the fan-out scenario: where notices were published, what
 * crossed the cluster bus, which shard channels are subscribed where, which flights live where.
 */
import { Redis } from 'ioredis';
import type { RedisCluster } from '@flight/test-servers';

export interface MasterStats {
  /** `cmdstat_publish` + `cmdstat_spublish` calls (commands run by scripts included). */
  published: number;
  /** Publish and publishshard messages received over the cluster bus. */
  busReceived: number;
  busSent: number;
}

/** One connection per master of the scenario's cluster, with its slot ranges. */
export interface Masters {
  nodes: { port: number; client: Redis; slots: [number, number][] }[];
  close(): void;
}

export async function connectMasters(cluster: RedisCluster): Promise<Masters> {
  const nodes = cluster.masters.map((m) => ({
    port: m.port,
    client: new Redis({ host: m.host, port: m.port }),
    slots: [] as [number, number][],
  }));
  const ranges = (await nodes[0]!.client.call('CLUSTER', 'SLOTS')) as [number, number, [string, number, ...unknown[]]][];
  for (const [from, to, [, port]] of ranges) nodes.find((n) => n.port === Number(port))?.slots.push([from, to]);
  return { nodes, close: () => nodes.forEach((n) => n.client.disconnect()) };
}

const field = (text: string, name: string): number => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(text)?.[1] ?? 0);
const calls = (text: string, command: string): number => Number(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(text)?.[1] ?? 0);

export async function masterStats(client: Redis): Promise<MasterStats> {
  const stats = await client.info('commandstats');
  const bus = (await client.call('CLUSTER', 'INFO')) as string;
  return {
    published: calls(stats, 'publish') + calls(stats, 'spublish'),
    busReceived: field(bus, 'cluster_stats_messages_publish_received') + field(bus, 'cluster_stats_messages_publishshard_received'),
    busSent: field(bus, 'cluster_stats_messages_publish_sent') + field(bus, 'cluster_stats_messages_publishshard_sent'),
  };
}

/** Shard channels subscribed on a master now, and how many of them hash to a slot it does not own. */
export async function shardChannels(node: Masters['nodes'][number]): Promise<{ shard: number; otherSlots: number; plain: number }> {
  const shard = (await node.client.call('PUBSUB', 'SHARDCHANNELS')) as string[];
  const plain = (await node.client.call('PUBSUB', 'CHANNELS')) as string[];
  let otherSlots = 0;
  for (const channel of shard) {
    const slot = Number(await node.client.call('CLUSTER', 'KEYSLOT', channel));
    if (!node.slots.some(([a, b]) => slot >= a && slot <= b)) otherSlots++;
  }
  return { shard: shard.length, otherSlots, plain: plain.length };
}

/** Flights whose keys live on this master: distinct `{hash tag}`s of the keys under the prefix. */
export async function flightsOn(client: Redis, prefix: string): Promise<number> {
  const tags = new Set<string>();
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      const m = /\{([^}]+)\}/.exec(key);
      if (m) tags.add(m[1]!);
    }
  } while (cursor !== '0');
  return tags.size;
}
