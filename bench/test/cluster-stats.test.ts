import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisCluster, type RedisCluster } from '@flight/test-servers';
import { connectMasters, masterStats, shardChannels, type Masters } from '../src/cluster-stats.js';

/**
 * The fan-out scenario's cluster figures tell a shard-local notice from a broadcast one: checked with
 * raw SPUBLISH / PUBLISH on a local 3-master cluster (so the target can PASS once notices are sharded).
 */
describe('cluster stats: where a notice went', () => {
  let cluster: RedisCluster;
  let masters: Masters;
  beforeAll(async () => {
    cluster = await startRedisCluster({ masters: 3 });
    masters = await connectMasters(cluster);
  });
  afterAll(async () => {
    masters?.close();
    await cluster?.stop();
  });

  it('SPUBLISH stays on the master owning the slot; PUBLISH crosses the cluster bus to every other master', async () => {
    const channel = '{fanout-test}:notice';
    const slot = Number(await masters.nodes[0]!.client.call('CLUSTER', 'KEYSLOT', channel));
    const owner = masters.nodes.find((n) => n.slots.some(([a, b]) => slot >= a && slot <= b))!;
    const others = masters.nodes.filter((n) => n !== owner);
    const subscriber = new Redis({ host: '127.0.0.1', port: owner.port });
    try {
      await subscriber.ssubscribe(channel);
      const channels = await Promise.all(masters.nodes.map(shardChannels));
      expect(channels[masters.nodes.indexOf(owner)]).toMatchObject({ shard: 1, otherSlots: 0 });

      const before = await Promise.all(masters.nodes.map((n) => masterStats(n.client)));
      expect(await owner.client.call('SPUBLISH', channel, 'x')).toBe(1);
      await sleep(200);
      const afterShard = await Promise.all(masters.nodes.map((n) => masterStats(n.client)));
      const delta = (i: number, from: typeof before) => ({
        published: afterShard[i]!.published - from[i]!.published,
        busReceived: afterShard[i]!.busReceived - from[i]!.busReceived,
      });
      expect(delta(masters.nodes.indexOf(owner), before)).toEqual({ published: 1, busReceived: 0 });
      for (const n of others) expect(delta(masters.nodes.indexOf(n), before)).toEqual({ published: 0, busReceived: 0 });

      await owner.client.publish('plain-notice', 'x');
      await sleep(200);
      const afterPlain = await Promise.all(masters.nodes.map((n) => masterStats(n.client)));
      for (const n of others) {
        const i = masters.nodes.indexOf(n);
        expect(afterPlain[i]!.busReceived - afterShard[i]!.busReceived).toBe(1);
      }
    } finally {
      subscriber.disconnect();
    }
  });
});
