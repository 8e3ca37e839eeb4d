import { fileURLToPath } from 'node:url';
import { registerCoordinatorConformance } from '@flight/core/testing';
import {
  checkClusterBytes,
  checkClusterFastAcquire,
  checkShardedWakeup,
  scanKeysWithoutTtl,
  checkCli,
  checkInspector,
  startRedisCluster,
  type RedisCluster,
} from '@flight/redis-test-kit';
import { Cluster as Cluster5 } from 'ioredis';
import { Cluster as Cluster6 } from 'ioredis6';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIoredisCoordinator, createIoredisDriver } from '../src/index.js';
import { createRedisCoordinator } from '@flight/redis-scripts';

let cluster: RedisCluster;
beforeAll(async () => {
  cluster = await startRedisCluster({ masters: 3 });
});
afterAll(async () => {
  await cluster?.stop();
});

const clients = {
  'ioredis 5': () => new Cluster5(cluster.masters),
  'ioredis 6': () => new Cluster6(cluster.masters),
};

for (const major of ['ioredis 5', 'ioredis 6'] as const) {
  describe(`${major} on a 3-master Redis Cluster`, () => {
    let client: ReturnType<(typeof clients)[typeof major]>;
    beforeAll(() => {
      client = clients[major]();
    });
    afterAll(async () => {
      await client.quit();
    });

    registerCoordinatorConformance({
      name: `${major} cluster`,
      create: (now) => {
        const coordinator = createIoredisCoordinator({ client, prefix: `c-${major.replace(' ', '')}`, clock: now });
        return { coordinator, cleanup: () => coordinator.close() };
      },
      modelRuns: 50,
      storesTraceparent: true,
    });

    it("wakes followers through sharded pub/sub: each channel lives, and each notice is delivered, on its slot's master only", async () => {
      await checkShardedWakeup(cluster, (prefix) => ({
        owner: createIoredisCoordinator({ client, prefix }),
        follower: createIoredisCoordinator({ client, prefix }),
      }));
    });

    it("creates new flights with one SET NX GET on every master, each stamped with its own master's clock", async () => {
      await checkClusterFastAcquire(cluster, (prefix) => {
        const driver = createIoredisDriver({ client });
        return { driver, coordinator: createRedisCoordinator(driver, { prefix }) };
      });
    });

    it('stores compressed results as bytes on every master and reads them back byte for byte', async () => {
      await checkClusterBytes((prefix) => {
        const driver = createIoredisDriver({ client });
        return { driver, coordinator: createRedisCoordinator(driver, { prefix }) };
      });
    });

    it("inspects flights and lists a stage's flights across every master", async () => {
      await checkInspector((prefix) => createIoredisCoordinator({ client, prefix }));
    });

    it('the flight command lists and shows flights of a cluster (--cluster, seed nodes)', async () => {
      const seeds = cluster.masters.map((m) => `redis://${m.host}:${m.port}`).join(',');
      const cli = fileURLToPath(new URL('../src/cli.ts', import.meta.url));
      await checkCli(cli, { redis: seeds, cluster: true }, (prefix) => createIoredisCoordinator({ client, prefix }), false);
    }, 60_000);

    it('spreads flights over every master and leaves no key without a TTL', async () => {
      for (const master of cluster.masters) {
        expect(await scanKeysWithoutTtl(master, '*')).toEqual([]);
      }
    });
  });
}
