/**
 * Express-only: the recorder swaps the response's prototype, and a mounted Express sub-app sets it again.
 * Behind the middleware a sub-app's responses are still answered correctly (never hang, never lost), but
 * not shared: mount the middleware inside the sub-app to coalesce them.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { AddressInfo } from 'node:net';
import { createSingleFlight } from '@flight/core';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { createFlightMiddleware } from '../src/index.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function serve(app: express.Express): Promise<string> {
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('express sub-apps behind the middleware', () => {
  it('a mounted sub-app answers every request correctly (its response goes out unshared, nothing hangs)', async () => {
    const singleFlight = createSingleFlight({ defaults: { guard: { timeoutMs: 120_000 } } });
    closers.push(() => singleFlight.close());
    let calls = 0;
    const sub = express();
    sub.get('/report', async (_req, res) => {
      calls++;
      await sleep(100);
      res.json({ report: 'ok' });
    });
    const app = express();
    app.use('/sub', createFlightMiddleware({ singleFlight, stage: 'sub' }), sub);
    const url = await serve(app);
    const answers = await Promise.all(
      Array.from({ length: 3 }, async () => {
        const response = await fetch(`${url}/sub/report`);
        return { status: response.status, body: await response.text() };
      }),
    );
    expect(answers).toEqual(Array(3).fill({ status: 200, body: '{"report":"ok"}' }));
    // Not shared (each ran the handler), but nothing waited for the 120 s guard timeout: the recording is
    // settled as soon as the response finishes without it (a hang would fail the 30 s test timeout).
    expect(calls).toBe(3);
  });
});
