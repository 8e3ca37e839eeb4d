/**
 * #12 Redis Cluster, a slot mid-migration: while the slot of a running flight is MIGRATING, its scripts
 * (three keys, some not yet created) are answered `TRYAGAIN`; ioredis retries them, and once the slot has
 * moved they succeed on the new master with the right result and nothing lost or duplicated.
 */
import { randomUUID } from 'node:crypto';
import type { FlightCoordinator } from '@flight/core/adapter';
import { createIoredisCoordinator } from '@flight/redis-ioredis';
import { createNodeRedisCoordinator } from '@flight/redis-node';
import { clusterKeySlot, flightKeys } from '@flight/redis-scripts';
import { rawCommand, startRedisCluster, type RedisCluster } from '@flight/test-servers';
import { Cluster } from 'ioredis';
import { createCluster } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordFigure, trackUnhandledRejections } from '../src/index.js';

const LEASE = { takeoverAfterMs: 3000, leaseTtlMs: 6000, maxRunMs: 60_000 };

let cluster: RedisCluster;
beforeAll(async () => {
  cluster = await startRedisCluster({ masters: 3 });
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});

/** The master serving `slot`, and its node id, read from CLUSTER NODES. */
async function slotOwner(slot: number) {
  const text = String(await rawCommand(cluster.masters[0]!.port, ['CLUSTER', 'NODES']));
  for (const line of text.trim().split('\n')) {
    const [id, address, flags, , , , , , ...ranges] = line.split(' ');
    if (!flags!.includes('master')) continue;
    for (const range of ranges) {
      const [from, to = from] = range.split('-').map(Number);
      if (slot >= from! && slot <= to!) return { id: id!, port: Number(address!.split('@')[0]!.split(':')[1]) };
    }
  }
  throw new Error(`no owner for slot ${slot}`);
}

async function nodeId(port: number) {
  return String(await rawCommand(port, ['CLUSTER', 'MYID']));
}

const adapters: Record<string, (prefix: string) => Promise<{ coordinator: FlightCoordinator; close: () => Promise<void> }>> = {
  ioredis: async (prefix) => {
    const client = new Cluster(cluster.masters, { retryDelayOnTryAgain: 50, redisOptions: { maxRetriesPerRequest: 20 } });
    client.on('error', () => undefined);
    const coordinator = createIoredisCoordinator({ client, prefix, commandTimeoutMs: 5000 });
    return { coordinator, close: async () => (await coordinator.close(), client.disconnect()) };
  },
  'node-redis': async (prefix) => {
    const client = createCluster({ rootNodes: cluster.masters.map((m) => ({ url: `redis://${m.host}:${m.port}` })) });
    client.on('error', () => undefined);
    await client.connect();
    const coordinator = createNodeRedisCoordinator({ client, prefix, commandTimeoutMs: 5000 });
    return { coordinator, close: async () => (await coordinator.close(), await client.close()) };
  },
};

describe('#12 Redis Cluster, slot mid-migration', () => {
  for (const [name, connect] of Object.entries(adapters))
    it(`${name}: a flight keeps working while its slot migrates (one key per flight: served on the source, then ASK-redirected, then on the new master)`, async () => {
      const unhandled = trackUnhandledRejections();
      const prefix = `mig-${name}`;
      const { coordinator, close } = await connect(prefix);
      try {
        const ref = { stage: 'mig', key: randomUUID() };
        const keys = flightKeys(prefix, ref);
        const slot = clusterKeySlot(keys.meta);
        const source = await slotOwner(slot);
        const targetPort = cluster.masters.map((m) => m.port).find((p) => p !== source.port)!;
        const target = { port: targetPort, id: await nodeId(targetPort) };
        const askBefore = Number(/errorstat_ASK:count=(\d+)/.exec(String(await rawCommand(source.port, ['INFO', 'errorstats'])))?.[1] ?? 0);

        const acquired = await coordinator.acquire({ ...ref, ...LEASE, ownerId: 'a', ownerToken: randomUUID() });
        expect(acquired.outcome).toBe('OWNER_NEW');
        const fence = { ...ref, ownerId: 'a', ownerToken: acquired.meta.ownerToken, epoch: acquired.meta.epoch };

        // Start the migration: the flight's one key is still on the source, which keeps serving it.
        expect(await rawCommand(target.port, ['CLUSTER', 'SETSLOT', slot, 'IMPORTING', source.id])).toBe('OK');
        expect(await rawCommand(source.port, ['CLUSTER', 'SETSLOT', slot, 'MIGRATING', target.id])).toBe('OK');
        expect(await coordinator.markRunning(fence, LEASE)).toMatchObject({ ok: true, meta: { status: 'RUNNING', epoch: fence.epoch } });
        const inSlot = (await rawCommand(source.port, ['CLUSTER', 'GETKEYSINSLOT', slot, 100])) as string[];
        expect(inSlot).toEqual([keys.meta]);
        expect(await rawCommand(source.port, ['MIGRATE', '127.0.0.1', target.port, '', 0, 5000, 'KEYS', ...inSlot])).toBe('OK');
        // Moved, slot still MIGRATING: the source answers ASK and the client asks the target.
        expect(await coordinator.heartbeat(fence, LEASE)).toMatchObject({ ok: true, meta: { status: 'RUNNING', epoch: fence.epoch } });
        const ask =
          Number(/errorstat_ASK:count=(\d+)/.exec(String(await rawCommand(source.port, ['INFO', 'errorstats'])))?.[1] ?? 0) - askBefore;
        expect(ask).toBeGreaterThan(0);
        for (const master of cluster.masters) {
          await rawCommand(master.port, ['CLUSTER', 'SETSLOT', slot, 'NODE', target.id]);
        }
        expect((await coordinator.complete(fence, { result: 'migrated-ok', resultTtlMs: 60_000 })).ok).toBe(true);
        const replay = await coordinator.acquire({ ...ref, ...LEASE, ownerId: 'b', ownerToken: randomUUID() });
        expect(replay).toMatchObject({ outcome: 'REPLAY_SUCCESS', result: 'migrated-ok' });
        expect(Number(await rawCommand(target.port, ['EXISTS', keys.meta]))).toBe(1);
        expect(Number(await rawCommand(source.port, ['CLUSTER', 'COUNTKEYSINSLOT', slot]))).toBe(0);
        recordFigure(`#12 slot mid-migration ${name}`, { slot, askReplies: ask, result: 'correct' });
      } finally {
        await close();
        unhandled.dispose();
        expect(unhandled.errors).toEqual([]);
      }
    });
});
