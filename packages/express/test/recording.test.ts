/**
 * Express-only: where the recorder intercepts a response's writes. Under its app's response prototype,
 * which a mounted Express sub-app's response prototype inherits from, so a sub-app's responses behind the
 * middleware are shared; a response whose prototype no longer leads there (a sub-app mounted in another
 * app last) is still answered correctly (never hangs, never lost), but not shared. A response whose methods
 * a middleware in front patched (as compression does) is recorded through its own methods.
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

async function fetchAll(url: string, n: number) {
  return Promise.all(
    Array.from({ length: n }, async () => {
      const response = await fetch(url);
      return { status: response.status, body: await response.text(), role: response.headers.get('x-flight-role') };
    }),
  );
}

describe('express sub-apps behind the middleware', () => {
  /** An app with a sub-app (a slow `/report` route counting its runs) mounted behind the middleware. */
  function appWithSubApp() {
    const singleFlight = createSingleFlight({ defaults: { guard: { timeoutMs: 120_000 } } });
    closers.push(() => singleFlight.close());
    const counter = { calls: 0 };
    const sub = express();
    sub.get('/report', async (_req, res) => {
      counter.calls++;
      await sleep(100);
      res.json({ report: 'ok' });
    });
    const app = express();
    app.use('/sub', createFlightMiddleware({ singleFlight, stage: 'sub' }), sub);
    return { app, sub, counter };
  }

  it("a mounted sub-app's responses are shared (its response prototype inherits the app's)", async () => {
    const { app, counter } = appWithSubApp();
    const url = await serve(app);
    const answers = await fetchAll(`${url}/sub/report`, 3);
    expect(answers.map(({ status, body }) => ({ status, body }))).toEqual(Array(3).fill({ status: 200, body: '{"report":"ok"}' }));
    expect(answers.map((a) => a.role).sort()).toEqual(['follower', 'follower', 'owner']);
    expect(counter.calls).toBe(1);
  });

  it('a response written around the recorder (a sub-app mounted in another app last) is answered unshared, nothing hangs', async () => {
    const { app, sub, counter } = appWithSubApp();
    // Mounting sets the sub-app's response prototype to the last parent's: `app`'s is no longer under it.
    express().use('/elsewhere', sub);
    const url = await serve(app);
    const answers = await fetchAll(`${url}/sub/report`, 3);
    expect(answers.map(({ status, body }) => ({ status, body }))).toEqual(Array(3).fill({ status: 200, body: '{"report":"ok"}' }));
    // Not shared (each ran the handler), but nothing waited for the 120 s guard timeout: the recording is
    // settled as soon as the response finishes without it (a hang would fail the 30 s test timeout).
    expect(counter.calls).toBe(3);
  });

  it('a response whose methods a middleware in front patched is shared, and each client gets it through those methods', async () => {
    const singleFlight = createSingleFlight();
    closers.push(() => singleFlight.close());
    let calls = 0;
    let patchedEnds = 0;
    const app = express();
    app.use((_req, res, next) => {
      const end = res.end.bind(res) as (...args: unknown[]) => express.Response;
      res.end = ((...args: unknown[]) => {
        patchedEnds++;
        return end(...args);
      }) as express.Response['end'];
      next();
    });
    app.get('/report', createFlightMiddleware({ singleFlight, stage: 'patched' }), async (_req, res) => {
      calls++;
      await sleep(100);
      res.json({ report: 'ok' });
    });
    const url = await serve(app);
    const answers = await fetchAll(`${url}/report`, 3);
    expect(answers.map(({ status, body }) => ({ status, body }))).toEqual(Array(3).fill({ status: 200, body: '{"report":"ok"}' }));
    expect(calls).toBe(1);
    // The owner's recorded response and each follower's replay go out through the patched `end`, once each.
    expect(patchedEnds).toBe(3);
  });
});
