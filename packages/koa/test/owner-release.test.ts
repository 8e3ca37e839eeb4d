/**
 * Koa: the owner's client is answered as soon as its handler's response is recorded and found
 * shareable, not after the flight's bookkeeping (storing the result in Redis, waking followers) settles.
 * Real Koa, real HTTP, real Redis; the coordinator's `complete` is held at a gate the test opens.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createSingleFlight, type FlightCoordinator } from '@flight/core';
import { createIoredisCoordinator } from '@flight/redis-ioredis';
import type { Server } from 'node:http';
import Koa from 'koa';
import { afterEach, describe, expect, it } from 'vitest';
import { createFlightMiddleware } from '../src/index.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function serve(app: Koa): Promise<string> {
  const server: Server = app.listen(0, '127.0.0.1');
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

/** The real coordinator, whose `complete` waits for `open()`; `completing` counts the calls made. */
function gatedCompletion(coordinator: FlightCoordinator) {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const state = { completing: 0, opened: false };
  const gated = new Proxy(coordinator, {
    get(target, name) {
      if (name === 'complete') {
        return async (...args: Parameters<FlightCoordinator['complete']>) => {
          state.completing++;
          await gate;
          return target.complete(...args);
        };
      }
      const value = Reflect.get(target, name, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return {
    coordinator: gated,
    state,
    open() {
      state.opened = true;
      open();
    },
  };
}

describe('koa owner response', () => {
  it("answers the owner's client before the flight's result is stored; followers still get it once stored", async () => {
    const redis = createIoredisCoordinator({ redis: 'redis://127.0.0.1:6379', prefix: `t:koa-owner-release:${randomBytes(4).toString('hex')}:` });
    const gated = gatedCompletion(redis);
    const singleFlight = createSingleFlight({ mode: 'distributed', coordinator: gated.coordinator });
    closers.push(async () => {
      gated.open();
      await singleFlight.close();
      await redis.close();
    });
    let calls = 0;
    const app = new Koa();
    app.use(createFlightMiddleware({ singleFlight, stage: 'owner-release' }));
    app.use((ctx) => {
      calls++;
      ctx.body = { report: calls };
    });
    const url = await serve(app);
    // Without the early answer the owner's response would wait for the gate; open it late so the test ends.
    const fallback = setTimeout(() => gated.open(), 3000);
    closers.push(async () => clearTimeout(fallback));

    const owner = await fetch(`${url}/report`);
    const ownerBody = await owner.text();
    expect({ opened: gated.state.opened, completing: gated.state.completing }).toEqual({ opened: false, completing: 1 });
    expect({ status: owner.status, role: owner.headers.get('x-flight-role'), body: ownerBody }).toEqual({
      status: 200,
      role: 'owner',
      body: '{"report":1}',
    });

    // The flight is still running (its result not stored): a second caller joins it and gets the same response.
    const follower = fetch(`${url}/report`).then(async (response) => ({
      status: response.status,
      role: response.headers.get('x-flight-role'),
      body: await response.text(),
    }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    gated.open();
    expect(await follower).toEqual({ status: 200, role: 'follower', body: '{"report":1}' });
    expect(calls).toBe(1);
  });
});
