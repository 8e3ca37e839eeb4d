/**
 * The fast acquire on Redis Cluster, the same test for every adapter: new flights spread over every master
 * are created by the plain SET NX GET once that master's clock has been seen (one acquire script per
 * master at most before that), each record stamped with the clock of the master that holds it.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { type RedisCoordinator, type RedisDriver, flightKeys } from '@flight/redis-scripts';
import { rawCommand, serverTimeMs, type RedisCluster } from '@flight/test-servers';

const LEASE = { takeoverAfterMs: 3000, leaseTtlMs: 6000, maxRunMs: 20_000 };

/** `EVALSHA` calls a master has served since its stats were reset. */
async function evalshaCalls(port: number): Promise<number> {
  const stats = String(await rawCommand(port, ['INFO', 'commandstats']));
  return Number(/cmdstat_evalsha:calls=(\d+)/.exec(stats)?.[1] ?? 0);
}

export async function checkClusterFastAcquire(
  cluster: RedisCluster,
  /** A coordinator and the driver it runs on (its `clockOf` names each key's master). */
  create: (prefix: string) => { coordinator: RedisCoordinator; driver: RedisDriver },
): Promise<void> {
  const prefix = `fastc-${randomUUID().slice(0, 8)}`;
  const { coordinator, driver } = create(prefix);
  try {
    expect(driver.setIfAbsent).toBeTypeOf('function');
    expect(driver.clockOf).toBeTypeOf('function');
    for (const master of cluster.masters) await rawCommand(master.port, ['CONFIG', 'RESETSTAT']);
    const flights = 60;
    const masters = new Map<string, number>();
    for (let i = 0; i < flights; i++) {
      const ref = { stage: 'fast-cluster', key: `k${i}` };
      const reply = await coordinator.acquire({ ...ref, ...LEASE, ownerId: 'node-a', ownerToken: randomUUID(), startRunning: true });
      expect(reply.outcome).toBe('OWNER_NEW');
      // The record carries the clock of the master that holds it.
      const server = driver.clockOf!(flightKeys(prefix, ref).meta);
      expect(server).toMatch(/:\d+$/);
      masters.set(server!, (masters.get(server!) ?? 0) + 1);
      const port = Number(server!.split(':').pop());
      expect(Math.abs(reply.meta.updatedAt - (await serverTimeMs(port)))).toBeLessThan(1000);
      const fence = { ...ref, ownerId: 'node-a', ownerToken: reply.meta.ownerToken, epoch: reply.meta.epoch };
      expect(await coordinator.complete(fence, { result: `r${i}`, resultTtlMs: 60_000 })).toMatchObject({ ok: true });
    }
    expect(masters.size).toBe(cluster.masters.length);
    // One script per flight (its complete) and at most one acquire script per master (its first flight).
    let scripts = 0;
    for (const master of cluster.masters) scripts += await evalshaCalls(master.port);
    expect(scripts).toBeGreaterThanOrEqual(flights);
    expect(scripts).toBeLessThanOrEqual(flights + cluster.masters.length + 1); // + the version probe
  } finally {
    await coordinator.close();
  }
}
