/**
 * The server processes of the streamed-response suites: `count` processes of a driver serving the routes
 * of stream-routes.ts (stream-node.ts) behind Redis — the shared server with the ioredis adapter, or
 * another adapter and a Redis Cluster of the suite's own — started before the suite's tests and stopped
 * (their keys deleted, their cluster stopped) after them. Call inside a `describe`.
 */
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { startRedisCluster, type RedisCluster } from '@flight/test-servers';
import { deleteByPrefix, startServerProcess, stopServerProcesses, type ServerProcess } from './cluster-harness.js';
import type { Driver } from './middleware-suite.js';

/** What the server processes coordinate through. */
export interface StreamBackend {
  /** @default 'ioredis' */
  adapter?: 'ioredis' | 'node-redis';
  /** A Redis Cluster of 3 masters started for the suite, instead of the shared server. @default false */
  cluster?: boolean;
}

export interface StreamServers {
  /** The processes, once started. */
  nodes: ServerProcess[];
  /** The Redis keys prefix of this suite's flights and counters. */
  prefix: string;
  /** A Redis connection for the tests' counters (open while the tests run). */
  redis(): Redis | Cluster;
}

/** A name for what `backend` says, for test titles. */
export function backendName(backend: StreamBackend): string {
  return `${backend.adapter ?? 'ioredis'}${backend.cluster ? ', Redis Cluster' : ''}`;
}

export function streamServers(
  driver: Driver,
  suite: string,
  count: number,
  env: Record<string, string> = {},
  backend: StreamBackend = {},
): StreamServers {
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const prefix = `flight-test:${suite}:${driver.name.replace(/\W+/g, '-')}:${randomBytes(4).toString('hex')}`;
  const nodes: ServerProcess[] = [];
  let redis: Redis | Cluster | undefined;
  let cluster: RedisCluster | undefined;

  beforeAll(async () => {
    const processEnv: Record<string, string> = {
      REDIS_URL: redisUrl,
      FLIGHT_PREFIX: prefix,
      FLIGHT_ADAPTER: backend.adapter ?? 'ioredis',
      DRIVER_MODULE: driver.process.module,
      DRIVER_NAME: driver.name,
      ...env,
    };
    if (backend.cluster) {
      cluster = await startRedisCluster({ masters: 3 });
      processEnv.FLIGHT_REDIS_CLUSTER = cluster.masters.map(({ host, port }) => `${host}:${port}`).join(',');
      redis = new Cluster(cluster.masters);
    } else redis = new Redis(redisUrl);
    const fixture = fileURLToPath(new URL('./stream-node.ts', import.meta.url));
    const started = await Promise.allSettled(
      Array.from({ length: count }, () => startServerProcess(fixture, { ...driver.process, env: processEnv })),
    );
    for (const result of started) if (result.status === 'fulfilled') nodes.push(result.value);
    const failed = started.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
  }, 60_000);

  afterAll(async () => {
    await stopServerProcesses(nodes);
    // The suite's own cluster goes with its keys; on the shared server, the suite's keys are deleted.
    if (redis instanceof Redis) await deleteByPrefix(redis, prefix);
    await redis?.quit();
    await cluster?.stop();
  }, 30_000);

  return {
    nodes,
    prefix,
    redis: () => {
      if (!redis) throw new Error('the stream servers are not started');
      return redis;
    },
  };
}
