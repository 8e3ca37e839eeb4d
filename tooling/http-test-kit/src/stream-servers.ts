/**
 * The server processes of the streamed-response suites: `count` processes of a driver serving the routes
 * of stream-routes.ts (stream-node.ts) behind the shared Redis, started before the suite's tests and
 * stopped (their keys deleted) after them. Call inside a `describe`.
 */
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { deleteByPrefix, startServerProcess, stopServerProcesses, type ServerProcess } from './cluster-harness.js';
import type { Driver } from './middleware-suite.js';

export interface StreamServers {
  /** The processes, once started. */
  nodes: ServerProcess[];
  /** The Redis keys prefix of this suite's flights and counters. */
  prefix: string;
  /** A Redis connection for the tests' counters (open while the tests run). */
  redis(): Redis;
}

export function streamServers(driver: Driver, suite: string, count: number, env: Record<string, string> = {}): StreamServers {
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const prefix = `flight-test:${suite}:${driver.name.replace(/\W+/g, '-')}:${randomBytes(4).toString('hex')}`;
  const nodes: ServerProcess[] = [];
  let redis: Redis | undefined;

  beforeAll(async () => {
    redis = new Redis(redisUrl);
    const fixture = fileURLToPath(new URL('./stream-node.ts', import.meta.url));
    const processEnv = {
      REDIS_URL: redisUrl,
      FLIGHT_PREFIX: prefix,
      DRIVER_MODULE: driver.process.module,
      DRIVER_NAME: driver.name,
      ...env,
    };
    const started = await Promise.allSettled(
      Array.from({ length: count }, () => startServerProcess(fixture, { ...driver.process, env: processEnv })),
    );
    for (const result of started) if (result.status === 'fulfilled') nodes.push(result.value);
    const failed = started.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
  }, 30_000);

  afterAll(async () => {
    await stopServerProcesses(nodes);
    if (redis) {
      await deleteByPrefix(redis, prefix);
      await redis.quit();
    }
  });

  return {
    nodes,
    prefix,
    redis: () => {
      if (!redis) throw new Error('the stream servers are not started');
      return redis;
    },
  };
}
