/**
 * A streamed response whose handler fails after the head, seen from a node whose follower was cut short:
 * that follower's call asks the flight again (the failure is retryable), is given the next run, and
 * cannot run it (its client was already answered), so that run fails at once. A request arriving on the
 * node meanwhile joins that call in-process. It must not be answered as if a real run of its handler had
 * failed (unshared, `bypass`): no handler ran for it, so it gets a flight of its own and owns it.
 * Two nodes (SingleFlight + Express server each) in this process over real Redis and real HTTP; node B's
 * `fail` write is held back 300 ms to hold open the window a Redis round trip opens in production.
 */
import { randomBytes } from 'node:crypto';
import { get as httpGet, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { createSingleFlight, type SingleFlight } from '@flight/core';
import { type FlightCoordinator } from '@flight/core/adapter';
import { createIoredisCoordinator } from '@flight/redis-ioredis';
import express from 'express';
import { Redis } from 'ioredis';
import { afterAll, expect, it } from 'vitest';
import { createFlightMiddleware } from '../src/index.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `flight:test:rejoin:${randomBytes(4).toString('hex')}`;
const clients: Redis[] = [];
const flights: SingleFlight[] = [];
const servers: Server[] = [];
let handlerRuns = 0;

/** A node: its own connection, coordinator, SingleFlight and Express server on a streamed route. */
async function node(holdFailMs: number): Promise<string> {
  const client = new Redis(url);
  clients.push(client);
  const real = createIoredisCoordinator({ client, prefix });
  const coordinator: FlightCoordinator = Object.create(real as object, {
    fail: { value: async (...args: Parameters<FlightCoordinator['fail']>) => (await sleep(holdFailMs), real.fail(...args)) },
  });
  const singleFlight = createSingleFlight({ mode: 'distributed', coordinator });
  flights.push(singleFlight);
  const app = express();
  app.get('/events/:id', createFlightMiddleware({ singleFlight, stage: 'events', stream: true }), async (req, res) => {
    handlerRuns++;
    res.setHeader('content-type', 'text/event-stream');
    res.write('data: 1\n\n');
    await sleep(60);
    if (req.query.ok === undefined) {
      res.write('data: 2\n\n');
      await sleep(60);
      res.destroy(new Error('upstream failed mid-stream'));
      return;
    }
    res.end('data: 2\n\n');
  });
  const server = app.listen(0, '127.0.0.1');
  servers.push(server);
  await new Promise((resolve) => server.once('listening', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A GET read to its end (or until the server cuts it): role header, body, whether it was cut short. */
function fetchStream(target: string, onFirst?: () => void): Promise<{ role: string | undefined; body: string; aborted: boolean }> {
  return new Promise((resolve, reject) => {
    // One Host for both nodes: the coalescing key includes it.
    httpGet(target, { headers: { host: 'app.example' } }, (res) => {
      let body = '';
      let aborted = false;
      res.setEncoding('utf8');
      res.on('data', (piece: string) => {
        if (body === '') onFirst?.();
        body += piece;
      });
      res.on('aborted', () => (aborted = true));
      res.on('error', () => (aborted = true));
      res.on('close', () => resolve({ role: res.headers['x-flight-role'] as string | undefined, body, aborted: aborted || !res.complete }));
    }).on('error', reject);
  });
}

afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    server.close();
  }
  await Promise.all(flights.map((flight) => flight.close()));
  for (const client of clients) client.disconnect();
});

it('a request that joins, on its node, the call of a cut-short follower runs a flight of its own instead of bypassing the middleware', async () => {
  const a = await node(0);
  const b = await node(300);
  const path = `/events/broken-${randomBytes(4).toString('hex')}`;
  let ownerStarted!: () => void;
  const started = new Promise<void>((resolve) => (ownerStarted = resolve));
  const owner = fetchStream(`${a}${path}`, ownerStarted);
  await started;
  const follower = await fetchStream(`${b}${path}`);
  expect({ role: follower.role, aborted: follower.aborted }).toEqual({ role: 'follower', aborted: true });
  await owner;
  // Node B's cut-short call is now failing the run it was given (its `fail` is held back): join it.
  const next = await fetchStream(`${b}${path}`);
  expect(next.role).toBe('owner');
  expect(handlerRuns).toBe(2);
});
