/**
 * One server process of the streamed-response suite: serves the routes of stream-routes.ts with the
 * driver named `DRIVER_NAME` of the module `DRIVER_MODULE` (which exports `drivers`), coalesced through a
 * Redis coordinator under `FLIGHT_PREFIX` (resumable with `FLIGHT_RESUME`). Run with `node --import tsx`; sends `{ port }` over IPC once
 * listening and stops on SIGTERM.
 */
import { pathToFileURL } from 'node:url';
import { createSingleFlight } from '@flight/core';
import { createIoredisCoordinator } from '@flight/redis-ioredis';
import { Redis } from 'ioredis';
import type { Driver, MiddlewareOptions } from './middleware-suite.js';
import { streamRoutes } from './stream-routes.js';

const prefix = process.env.FLIGHT_PREFIX!;
const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const { drivers } = (await import(pathToFileURL(process.env.DRIVER_MODULE!).href)) as { drivers: Record<string, Driver> };
const driver = drivers[process.env.DRIVER_NAME!]!;
const singleFlight = createSingleFlight({
  coordinator: createIoredisCoordinator({ client: redis, prefix }),
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
    .finally(() => redis.quit().finally(() => process.exit(0)));
});
