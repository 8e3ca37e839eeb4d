/**
 * `@flight/http-test-kit/cluster-node`: the server side of `describeClusterBurst` — what every
 * binding's cluster fixture shares. Reads `FLIGHT_PREFIX`, `EXPECTED` and `REDIS_URL` from the environment the
 * harness forks it with, and gives the fixture its Redis client, a distributed single-flight, and the arrival
 * counter its handlers wait on (per burst, from the `x-burst` header), so the concurrency is real.
 * Imports no vitest: it runs in a plain forked process.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createSingleFlight, type SingleFlight } from '@flight/core';
import { createIoredisCoordinator } from '@flight/redis-ioredis';
import { Redis } from 'ioredis';

export interface ClusterNode {
  prefix: string;
  /** How many requests the test sends to `/report` in all (`EXPECTED`). */
  expected: number;
  client: Redis;
  singleFlight: SingleFlight;
  /** Counts one request of `burst` (no burst: the test's single burst) as arrived. */
  arrive(burst: string | undefined): Promise<number>;
  /** Resolves once `count` requests of `burst` have arrived, or after 5 s. */
  allArrived(burst: string | undefined, count: number): Promise<void>;
  /** Closes the single-flight, then the client. */
  close(): Promise<void>;
}

export function clusterNode(nodeId = `node-${process.pid}`): ClusterNode {
  const prefix = process.env.FLIGHT_PREFIX!;
  const client = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  const singleFlight = createSingleFlight({ coordinator: createIoredisCoordinator({ client, prefix }), mode: 'distributed', nodeId });
  const arrivals = (burst: string | undefined) => `${prefix}:arrived${burst ? `:${burst}` : ''}`;
  return {
    prefix,
    expected: Number(process.env.EXPECTED ?? 1),
    client,
    singleFlight,
    arrive: (burst) => client.incr(arrivals(burst)),
    async allArrived(burst, count) {
      const deadline = Date.now() + 5000;
      while (Number(await client.get(arrivals(burst))) < count && Date.now() < deadline) {
        await sleep(10);
      }
    },
    close: () => singleFlight.close().finally(() => client.quit().then(() => undefined)),
  };
}
