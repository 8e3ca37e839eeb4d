/**
 * The server process of the `http` scenario: an Express route returning 1 KB of JSON, plain, behind
 * `@flight/express` (distributed over Redis, or local), or behind a Redis response cache (`redis-cache`).
 * Runs in its own process (`node --import tsx`) so the load generator and the server never share an event
 * loop. Configured by environment:
 * HTTP_BENCH_CONTENDER (`plain` | `flight-distributed` | `flight-local` | `redis-cache`), HTTP_BENCH_REDIS_URL,
 * HTTP_BENCH_PREFIX. Sends `{ port }` over IPC once listening; answers `{ cmd: 'stats' }` with the
 * handler's run count and the process's CPU time so far, and exits on `{ cmd: 'exit' }`.
 */
import type { AddressInfo } from 'node:net';
import { createSingleFlight, type SingleFlight } from '@flight/core';
import { createFlightMiddleware } from '@flight/express';
import { createIoredisCoordinator } from '@flight/redis-ioredis';
import express, { type RequestHandler } from 'express';
import { Redis } from 'ioredis';

const contender = process.env.HTTP_BENCH_CONTENDER ?? 'plain';
const redisUrl = process.env.HTTP_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = process.env.HTTP_BENCH_PREFIX ?? 'fb:http:';

/** About 1 KB of JSON once serialized. */
const payload = {
  items: Array.from({ length: 15 }, (_, i) => ({ id: i, name: `item-${i}`, price: 10 + i, tags: ['a', 'b', 'c'], stock: i * 3 })),
};

/**
 * Diagnostic contender `http-layer-only`: the middleware over a stand-in whose `execute` just runs the
 * supplier — the HTTP layer's own cost (key, capture, replay), without the single-flight core.
 */
const passthroughFlight = {
  execute: async (stage: string, key: string, supplier: (context: unknown) => Promise<unknown>) => ({
    value: await supplier({ signal: new AbortController().signal, stage, key, role: 'owner', attempt: 1, progress() {} }),
    role: 'owner',
    shared: false,
    stage,
    key,
  }),
  close: async () => {},
} as unknown as SingleFlight;

/**
 * Contender `redis-cache`: what any Redis-backed response cache does for a request, and no more — a GET of
 * the URL's entry, and on a miss the route runs and its body is SET with a TTL (what apicache or
 * express-redis-cache do over Redis, without their extras). No coordination: concurrent misses each run
 * the route. The plain cache the unshared path is held against.
 */
function redisResponseCache(redis: Redis): RequestHandler {
  return (req, res, next) => {
    const key = `${prefix}${req.originalUrl}`;
    redis.getBuffer(key).then(
      (hit) => {
        if (hit) {
          res.type('application/json').send(hit);
          return;
        }
        const send = res.send.bind(res);
        res.send = (body: unknown) => {
          if (res.statusCode === 200 && typeof body === 'string') redis.set(key, body, 'PX', 30_000).catch(() => undefined);
          return send(body);
        };
        next();
      },
      (error: unknown) => next(error),
    );
  };
}

let singleFlight: SingleFlight | undefined;
let cacheClient: Redis | undefined;
const middleware: RequestHandler[] = [];
if (contender === 'redis-cache') {
  cacheClient = new Redis(redisUrl);
  middleware.push(redisResponseCache(cacheClient));
} else if (contender !== 'plain') {
  singleFlight =
    contender === 'flight-local'
      ? createSingleFlight({ mode: 'local' })
      : contender === 'http-layer-only'
        ? passthroughFlight
        : createSingleFlight({ mode: 'distributed', coordinator: createIoredisCoordinator({ redis: redisUrl, prefix }) });
  middleware.push(createFlightMiddleware({ singleFlight, stage: 'http-bench' }));
}

let handlerRuns = 0;
const app = express();
app.set('etag', false);
app.set('x-powered-by', false);
app.get('/item/:id', ...middleware, (req, res) => {
  handlerRuns++;
  res.json({ id: req.params.id, ...payload });
});

const server = app.listen(0, '127.0.0.1', () => {
  process.send?.({ port: (server.address() as AddressInfo).port });
});
server.keepAliveTimeout = 60_000;

process.on('message', (message: { cmd?: string }) => {
  if (message.cmd === 'stats') {
    const cpu = process.cpuUsage();
    process.send?.({ handlerRuns, cpuUs: cpu.user + cpu.system });
  }
  if (message.cmd === 'exit') {
    server.closeAllConnections();
    server.close();
    cacheClient?.disconnect();
    void (singleFlight?.close() ?? Promise.resolve()).finally(() => process.exit(0));
  }
});
