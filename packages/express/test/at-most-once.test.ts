/**
 * An unsafe request under an Idempotency-Key runs at most once: when its handler outlives the guard
 * timeout (with the stage's retries off, the case where the timeout used to be stored retryable), the
 * client's retry with the same key gets the recorded failure, and the handler is not run a second time.
 * Real Express, real HTTP, real Redis.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createSingleFlight } from '@flight/core';
import { createIoredisCoordinator } from '@flight/redis-ioredis';
import express from 'express';
import { Redis } from 'ioredis';
import { afterAll, expect, it } from 'vitest';
import { createFlightMiddleware } from '../src/index.js';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const coordinator = createIoredisCoordinator({ client: redis, prefix: `flight:test:amo:${randomBytes(4).toString('hex')}` });
const singleFlight = createSingleFlight({
  coordinator,
  mode: 'hybrid',
  stages: { orders: { guard: { timeoutMs: 100, retry: false }, failureTtlMs: 30_000 } },
});
let runs = 0;
const app = express();
app.post('/orders', express.json(), createFlightMiddleware({ singleFlight, stage: 'orders', idempotency: true }), async (_req, res) => {
  runs++;
  await sleep(300);
  if (!res.headersSent) res.status(201).json({ order: runs });
});
const server = app.listen(0, '127.0.0.1');

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await coordinator.close();
  redis.disconnect();
});

it('a retry of a timed-out idempotent POST replays its outcome instead of running the handler again', async () => {
  await new Promise((resolve) => (server.listening ? resolve(undefined) : server.once('listening', resolve)));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/orders`;
  const post = () =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': '"order-7"' },
      body: '{"item":"book"}',
    });
  const first = await post();
  await first.arrayBuffer();
  await sleep(400); // the slow handler has finished by now
  const retry = await post();
  const body = await retry.text();
  expect(runs, `first ${first.status}, retry ${retry.status} ${body}`).toBe(1);
  expect(retry.status).toBeGreaterThanOrEqual(500);
});
