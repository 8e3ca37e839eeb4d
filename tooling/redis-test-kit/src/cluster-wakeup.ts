/**
 * Targeted wake-up on Redis Cluster, the same test for every adapter: followers of flights spread over
 * every master are subscribed (SSUBSCRIBE) only on the master that owns each flight's slot, each notice
 * is delivered there only, and the follower's coordinator holds at most one subscriber per master.
 */
import { randomUUID } from 'node:crypto';
import type { FlightCoordinator } from '@flight/core/adapter';
import { expect } from 'vitest';
import { type RedisCoordinator, flightKeys, noticeChannel, clusterKeySlot } from '@flight/redis-scripts';
import { rawCommand, sleep, type RedisCluster } from '@flight/test-servers';

const LEASE = { takeoverAfterMs: 3000, leaseTtlMs: 6000, maxRunMs: 20_000 };

async function lines(port: number, args: string[]): Promise<string[]> {
  return String(await rawCommand(port, args))
    .split('\n')
    .filter((line) => line.trim().length > 0);
}

/** Which master serves `slot`, from CLUSTER SHARDS-like CLUSTER SLOTS output of any node. */
async function masterOfSlot(cluster: RedisCluster, slot: number): Promise<number> {
  const slots = (await rawCommand(cluster.masters[0]!.port, ['CLUSTER', 'SLOTS'])) as unknown as [number, number, [string, number]][];
  const range = slots.find(([from, to]) => slot >= from && slot <= to);
  return Number(range![2][1]);
}

export async function checkShardedWakeup(
  cluster: RedisCluster,
  create: (prefix: string) => { owner: FlightCoordinator; follower: RedisCoordinator },
): Promise<{ flights: number; perMaster: Record<number, number> }> {
  const prefix = `shard-${randomUUID().slice(0, 8)}`;
  const { owner, follower } = create(prefix);
  try {
    const flights = 24;
    const fences = await Promise.all(
      Array.from({ length: flights }, async (_, i) => {
        const key = `k${i}`;
        const reply = await owner.acquire({ stage: 'sh', key, ...LEASE, ownerId: 'owner', ownerToken: randomUUID(), startRunning: true });
        return { stage: 'sh', key, ownerId: 'owner', ownerToken: reply.meta.ownerToken, epoch: reply.meta.epoch };
      }),
    );
    const waits = fences.map((f) => follower.waitForTerminal(f, { epoch: f.epoch, timeoutMs: 5000 }));
    await sleep(300);
    const perMaster: Record<number, number> = {};
    for (const fence of fences) {
      const channel = noticeChannel(prefix, flightKeys(prefix, fence).tag, 0);
      const home = await masterOfSlot(cluster, clusterKeySlot(channel));
      perMaster[home] = (perMaster[home] ?? 0) + 1;
      for (const master of cluster.masters) {
        const [, count] = (await rawCommand(master.port, ['PUBSUB', 'SHARDNUMSUB', channel])) as unknown as [string, number];
        expect({ channel, port: master.port, count }).toEqual({ channel, port: master.port, count: master.port === home ? 1 : 0 });
      }
    }
    expect(Object.keys(perMaster).length).toBe(cluster.masters.length); // the flights spread over every master
    // At most one subscriber connection per master (only this process subscribes in the test).
    for (const master of cluster.masters) {
      expect((await lines(master.port, ['CLIENT', 'LIST', 'TYPE', 'pubsub'])).length).toBeLessThanOrEqual(1);
    }
    await Promise.all(fences.map((f) => owner.complete(f, { result: `v-${f.key}`, resultTtlMs: 5000 })));
    const events = await Promise.all(waits);
    expect(events.map((e) => e?.result)).toEqual(fences.map((f) => `v-${f.key}`));
    expect(follower.notifications.received).toBe(flights);
    expect(follower.notifications.foreign).toBe(0);
    return { flights, perMaster };
  } finally {
    await follower.close();
    await owner.close();
  }
}
