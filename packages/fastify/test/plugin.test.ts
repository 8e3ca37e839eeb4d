/**
 * What is Fastify's own in the binding: route opt-in through `config.flight`, plugin options as route
 * defaults, validation when a route is declared, encapsulation, the decorator, Fastify's automatic HEAD
 * routes, handlers that answer through `reply` later, and the route's hooks running for every caller.
 * Real servers on loopback, against Fastify 4 and 5.
 */
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { createSingleFlight, FlightConfigurationError, FlightValidationError, type SingleFlight } from '@flight/core';
import fastify5, { type FastifyInstance } from 'fastify';
import fastify4 from 'fastify4';
import { afterEach, describe, expect, it } from 'vitest';
import { fastifyFlight, FlightBodyTooLargeError } from '../src/index.js';
import type { FastifyFactory } from './driver.js';

interface Answer {
  status: number;
  body: string;
  headers: Headers;
  role: string | null;
}

async function send(url: string, init?: RequestInit): Promise<Answer> {
  const response = await fetch(url, init);
  return { status: response.status, body: await response.text(), headers: response.headers, role: response.headers.get('x-flight-role') };
}

const many = (n: number, url: string, init?: RequestInit) => Promise.all(Array.from({ length: n }, () => send(url, init)));

describe.each([
  ['fastify 5', fastify5],
  ['fastify 4', fastify4 as unknown as FastifyFactory],
] as const)('%s plugin', (_name, fastify) => {
  const apps: FastifyInstance[] = [];
  const flights: SingleFlight[] = [];
  afterEach(async () => {
    for (const app of apps.splice(0)) {
      app.server.closeAllConnections();
      await app.close();
    }
    await Promise.all(flights.splice(0).map((flight) => flight.close()));
  });

  /** An app whose requests are counted; `gate()` resolves once `expected` requests arrived (so they overlap). */
  function setup(expected: number) {
    const singleFlight = createSingleFlight();
    flights.push(singleFlight);
    const app = fastify();
    apps.push(app);
    let arrived = 0;
    let open: () => void = () => {};
    const opened = new Promise<void>((resolve) => (open = resolve));
    app.addHook('onRequest', async () => {
      if (++arrived >= expected) open();
    });
    const gate = async () => {
      await Promise.race([opened, sleep(2000)]);
      await sleep(25);
    };
    const listen = async () => {
      await app.listen({ port: 0, host: '127.0.0.1' });
      return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    };
    return { app, singleFlight, gate, listen };
  }

  it('coalesces routes that opt in with config.flight (true, a stage, or options over the plugin defaults); others run as usual', async () => {
    const { app, singleFlight, gate, listen } = setup(4);
    await app.register(fastifyFlight, { singleFlight, stage: 'plugin-default', roleHeader: 'x-role' });
    const calls = { auto: 0, named: 0, custom: 0, plain: 0 };
    app.get('/auto', { config: { flight: true } }, async () => {
      calls.auto++;
      await gate();
      return { route: 'auto' };
    });
    app.get('/named', { config: { flight: 'named' } }, async () => {
      calls.named++;
      await gate();
      return { route: 'named' };
    });
    app.get('/custom', { config: { flight: { stage: 'custom', roleHeader: 'x-flight-role' } } }, async () => {
      calls.custom++;
      await gate();
      return { route: 'custom' };
    });
    app.get('/plain', async () => {
      calls.plain++;
      return { route: 'plain' };
    });
    const url = await listen();
    const auto = await many(4, `${url}/auto`);
    expect(auto.map((a) => a.headers.get('x-role')).sort()).toEqual(['follower', 'follower', 'follower', 'owner']);
    await many(4, `${url}/named`);
    const custom = await many(4, `${url}/custom`);
    expect(custom.filter((a) => a.role === 'owner')).toHaveLength(1);
    const plain = await many(4, `${url}/plain`);
    expect(calls).toEqual({ auto: 1, named: 1, custom: 1, plain: 4 });
    expect(plain.every((a) => a.headers.get('x-role') === null && a.body === '{"route":"plain"}')).toBe(true);
  });

  it("validates a route's options when it is declared (FlightValidationError)", async () => {
    const { app, singleFlight } = setup(1);
    await app.register(fastifyFlight, { singleFlight });
    expect(() => app.get('/a', { config: { flight: { stage: 'bad stage' } } }, () => 'x')).toThrow(FlightValidationError);
    // No stage from the plugin nor the route.
    expect(() => app.get('/b', { config: { flight: true } }, () => 'x')).toThrow(FlightValidationError);
    expect(() => app.get('/c', { config: { flight: { stage: 's', replayHeaders: ['set-cookie'] } } }, () => 'x')).toThrow(/never replayed/);
  });

  it('respects encapsulation: a sibling scope without the plugin is not coalesced, nor decorated', async () => {
    const { app, singleFlight, gate, listen } = setup(6);
    let inside = 0;
    let outside = 0;
    await app.register(async (scope) => {
      await scope.register(fastifyFlight, { singleFlight, stage: 'scoped' });
      expect(scope.singleFlight).toBe(singleFlight);
      scope.get('/in', { config: { flight: true } }, async () => {
        inside++;
        await gate();
        return 'in';
      });
    });
    await app.register(async (sibling) => {
      expect(sibling.hasDecorator('singleFlight')).toBe(false);
      sibling.get('/out', { config: { flight: true } }, async () => {
        outside++;
        await gate();
        return 'out';
      });
    });
    expect(app.hasDecorator('singleFlight')).toBe(false);
    const url = await listen();
    const answers = await Promise.all([
      ...Array.from({ length: 3 }, () => send(`${url}/in`)),
      ...Array.from({ length: 3 }, () => send(`${url}/out`)),
    ]);
    expect(inside).toBe(1);
    expect(outside).toBe(3);
    expect(answers.slice(3).every((a) => a.role === null && a.body === 'out')).toBe(true);
  });

  it('registered again in a child scope, the closest registration alone governs its routes', async () => {
    const { app, singleFlight, gate, listen } = setup(3);
    await app.register(fastifyFlight, { singleFlight, stage: 'outer', roleHeader: 'x-outer' });
    let calls = 0;
    await app.register(async (child) => {
      await child.register(fastifyFlight, { singleFlight, stage: 'inner', roleHeader: 'x-inner' });
      child.get('/nested', { config: { flight: true } }, async () => {
        calls++;
        await gate();
        return 'nested';
      });
    });
    const url = await listen();
    const answers = await many(3, `${url}/nested`);
    expect(calls).toBe(1);
    expect(answers.map((a) => a.headers.get('x-inner')).sort()).toEqual(['follower', 'follower', 'owner']);
    expect(answers.every((a) => a.headers.get('x-outer') === null && a.body === 'nested')).toBe(true);
  });

  it("coalesces Fastify's automatic HEAD route separately from GET, with the GET's Content-Length", async () => {
    const { app, singleFlight, gate, listen } = setup(4);
    await app.register(fastifyFlight, { singleFlight, stage: 'head' });
    let calls = 0;
    app.get('/doc', { config: { flight: true } }, async () => {
      calls++;
      await gate();
      return 'twelve bytes';
    });
    const url = await listen();
    const heads = await many(4, `${url}/doc`, { method: 'HEAD' });
    expect(calls).toBe(1);
    for (const head of heads) {
      expect(head.status).toBe(200);
      expect(head.body).toBe('');
      expect(head.headers.get('content-length')).toBe('12');
    }
    expect(heads.map((a) => a.role).sort()).toEqual(['follower', 'follower', 'follower', 'owner']);
    const get = await send(`${url}/doc`);
    expect(get).toMatchObject({ body: 'twelve bytes', role: 'owner' });
  });

  it('shares a response sent later through reply by a callback-style handler', async () => {
    const { app, singleFlight, gate, listen } = setup(4);
    await app.register(fastifyFlight, { singleFlight, stage: 'callback' });
    let calls = 0;
    app.get('/later', { config: { flight: true } }, (_request, reply) => {
      calls++;
      void gate().then(() => reply.code(201).header('content-type', 'text/plain').send(`late ${calls}`));
    });
    const url = await listen();
    const answers = await many(4, `${url}/later`);
    expect(calls).toBe(1);
    expect(answers.every((a) => a.status === 201 && a.body === 'late 1' && a.headers.get('content-type') === 'text/plain')).toBe(true);
  });

  it('an async handler that resolves without sending gets an empty response, shared like any other', async () => {
    const { app, singleFlight, gate, listen } = setup(3);
    await app.register(fastifyFlight, { singleFlight, stage: 'empty' });
    let calls = 0;
    app.get('/nothing', { config: { flight: true } }, async (_request, reply) => {
      calls++;
      await gate();
      void reply.code(204).header('etag', '"e1"');
    });
    app.post('/nothing', { config: { flight: true } }, async (_request, reply) => {
      void reply.code(202);
    });
    const url = await listen();
    const answers = await many(3, `${url}/nothing`);
    expect(calls).toBe(1);
    expect(answers.every((a) => a.status === 204 && a.body === '' && a.headers.get('etag') === '"e1"')).toBe(true);
    // Not coalesced (POST without idempotency): the handler runs as usual.
    expect(await send(`${url}/nothing`, { method: 'POST' })).toMatchObject({ status: 202, body: '', role: 'bypass' });
  });

  it('refuses a body above maxRequestBodyBytes before Fastify parses it, through the error handler, with the typed error', async () => {
    const { app, singleFlight, listen } = setup(1);
    await app.register(fastifyFlight, { singleFlight, stage: 'upload', idempotency: true, maxRequestBodyBytes: 1000 });
    const seen: unknown[] = [];
    app.setErrorHandler((error, _request, reply) => {
      seen.push(error);
      return reply.code(413).send({ handledBy: 'app', code: (error as { code?: string }).code });
    });
    let runs = 0;
    app.post('/upload', { config: { flight: true } }, async () => ++runs);
    const url = await listen();
    const declared = await send(`${url}/upload`, {
      method: 'POST',
      body: 'x'.repeat(2000),
      headers: { 'content-type': 'text/plain', 'idempotency-key': '"big-1"' },
    });
    expect(declared.status).toBe(413);
    expect(JSON.parse(declared.body)).toEqual({ handledBy: 'app', code: 'E_FLIGHT_HTTP_BODY_TOO_LARGE' });
    let sent = 0;
    const streamed = await send(`${url}/upload`, {
      method: 'POST',
      body: new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent++ < 5) controller.enqueue(new Uint8Array(500).fill(120));
          else controller.close();
        },
      }),
      headers: { 'content-type': 'text/plain', 'idempotency-key': '"big-2"' },
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);
    expect(seen).toHaveLength(2);
    expect(seen.every((error) => error instanceof FlightBodyTooLargeError)).toBe(true);
    // Within the limit, the request runs.
    const small = await send(`${url}/upload`, {
      method: 'POST',
      body: 'ok',
      headers: { 'content-type': 'text/plain', 'idempotency-key': '"small"' },
    });
    expect(small).toMatchObject({ status: 200, body: '1' });
    expect(runs).toBe(1);
  });

  it('answers Idempotency-Key requests made through fastify.inject() (no headersDistinct): once, then replayed', async () => {
    const singleFlight = createSingleFlight();
    flights.push(singleFlight);
    const app = fastify();
    apps.push(app);
    await app.register(fastifyFlight, { singleFlight });
    let runs = 0;
    app.post('/orders', { config: { flight: { stage: 'orders', idempotency: true } } }, async (_req, reply) => {
      void reply.code(201);
      return { order: ++runs };
    });
    const post = (key: string | string[]) =>
      app.inject({
        method: 'POST',
        url: '/orders',
        headers: { 'idempotency-key': key, 'content-type': 'application/json' },
        payload: '{}',
      });
    const [first, retry] = [await post('"inject-1"'), await post('"inject-1"')];
    expect([first.statusCode, retry.statusCode]).toEqual([201, 201]);
    expect([first.json(), retry.json()]).toEqual([{ order: 1 }, { order: 1 }]);
    expect(runs).toBe(1);
    expect((await post('not-a-string')).statusCode).toBe(400);
  });

  it('refuses to register without a singleFlight, or with an option typo (it succeeded, and the first opted-in route threw)', async () => {
    for (const options of [{}, { singleFlight: createSingleFlight(), stages: 'report' }]) {
      const app = fastify();
      apps.push(app);
      await expect(app.register(fastifyFlight, options as never)).rejects.toBeInstanceOf(FlightConfigurationError);
    }
    // Fastify's own register options are not typos.
    const app = fastify();
    apps.push(app);
    const singleFlight = createSingleFlight();
    flights.push(singleFlight);
    await app.register(fastifyFlight, { singleFlight, prefix: '/v1' } as never);
  });

  it("runs the route's onSend and onResponse hooks for the owner and every follower", async () => {
    const { app, singleFlight, gate, listen } = setup(4);
    await app.register(fastifyFlight, { singleFlight, stage: 'hooks' });
    let responses = 0;
    app.addHook('onSend', async (_request, reply, payload) => {
      void reply.header('x-served-by', 'hook');
      return payload;
    });
    app.addHook('onResponse', async () => {
      responses++;
    });
    app.get('/hooked', { config: { flight: true } }, async () => {
      await gate();
      return { ok: true };
    });
    const url = await listen();
    const answers = await many(4, `${url}/hooked`);
    expect(answers.every((a) => a.headers.get('x-served-by') === 'hook' && a.body === '{"ok":true}')).toBe(true);
    await sleep(20);
    expect(responses).toBe(4);
  });
});
