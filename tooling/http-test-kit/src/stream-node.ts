/**
 * One server process of the streamed-response suite: serves the routes of stream-routes.ts with the
 * driver named `DRIVER_NAME` of the module `DRIVER_MODULE` (which exports `drivers`), coalesced through a
 * Redis coordinator under `FLIGHT_PREFIX` (resumable with `FLIGHT_RESUME`): the ioredis adapter on
 * `REDIS_URL`, or the adapter `FLIGHT_ADAPTER` names on the Redis Cluster `FLIGHT_REDIS_CLUSTER` lists
 * (`host:port,…`). Run with `node --import tsx`; sends `{ port }` over IPC once listening and stops on SIGTERM.
 */
import { pathToFileURL } from 'node:url';
import { createSingleFlight } from '@flight/core';
import { type FlightCoordinator } from '@flight/core/adapter';
import { createIoredisCoordinator } from '@flight/redis-ioredis';
import { createNodeRedisCoordinator } from '@flight/redis-node';
import { Cluster, Redis } from 'ioredis';
import { createCluster } from 'redis';
import type { Driver, MiddlewareOptions } from './middleware-suite.js';
import { streamRoutes } from './stream-routes.js';

const prefix = process.env.FLIGHT_PREFIX!;
const clusterNodes = process.env.FLIGHT_REDIS_CLUSTER?.split(',').map((address) => {
  const [host, port] = address.split(':');
  return { host: host!, port: Number(port) };
});
/** The routes' counters (and the ioredis adapter's client). */
const redis: Redis | Cluster = clusterNodes ? new Cluster(clusterNodes) : new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');

async function coordinatorOf(): Promise<{ coordinator: FlightCoordinator; close: () => Promise<unknown> }> {
  if (process.env.FLIGHT_ADAPTER !== 'node-redis')
    return { coordinator: createIoredisCoordinator({ client: redis, prefix }), close: async () => undefined };
  if (!clusterNodes) {
    const coordinator = createNodeRedisCoordinator({ redis: { url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' }, prefix });
    return { coordinator, close: async () => undefined };
  }
  const client = createCluster({ rootNodes: clusterNodes.map(({ host, port }) => ({ url: `redis://${host}:${port}` })) });
  await client.connect();
  return { coordinator: createNodeRedisCoordinator({ client, prefix }), close: () => client.close() };
}

const { drivers } = (await import(pathToFileURL(process.env.DRIVER_MODULE!).href)) as { drivers: Record<string, Driver> };
const driver = drivers[process.env.DRIVER_NAME!]!;
const { coordinator, close } = await coordinatorOf();
const singleFlight = createSingleFlight({
  coordinator,
  mode: 'distributed',
  nodeId: `node-${process.pid}`,
  // The resume suite kills an owner: its run is taken over 1.5 s after its last heartbeat.
  ...(process.env.FLIGHT_RESUME ? { defaults: { heartbeatIntervalMs: 500 } } : {}),
});
// FLIGHT_RESUME: the resume suite's routes (resumable, and keyed per user by `x-user`).
const options: MiddlewareOptions = process.env.FLIGHT_RESUME
  ? { stream: true, resume: true, key: (req) => ({ identity: String(req.headers['x-user'] ?? 'anonymous') }) }
  : { stream: true };
const server = await driver.start({ singleFlight, stage: 'stream', options, handler: streamRoutes(redis, prefix) });
process.send?.({ port: Number(new URL(server.url).port) });

process.on('SIGTERM', () => {
  void server
    .close()
    .then(() => singleFlight.close())
    .then(close)
    .finally(() => redis.quit().finally(() => process.exit(0)));
});
