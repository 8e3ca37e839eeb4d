/**
 * The middleware behaviour suite (`registerMiddlewareSuite`, exported as `@flight/http-test-kit`), run
 * unchanged against every framework binding (Express 4/5, Koa 2/3, Fastify 4/5). A driver starts a real server
 * on loopback whose route is guarded by the middleware and answered by a framework-neutral handler
 * description; the tests talk to it with real HTTP (fetch).
 */
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { request as httpRequest, type OutgoingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  createMemoryCoordinator,
  createSingleFlight,
  FlightConfigurationError,
  FlightValidationError,
  type SingleFlight,
  type SingleFlightOptions,
} from '@flight/core';
import { type FlightCoordinator } from '@flight/core/adapter';
import { createIoredisCoordinator } from '@flight/redis-ioredis';
import fc from 'fast-check';
import { WAIT_FOR_EFFECT } from '@flight/test-servers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { FlightKeySpec, HttpFlightOptions } from '@flight/http-shared';
import { countedEvents } from './counted-events.js';
import { registerFreshnessCases } from './freshness-cases.js';
import { registerStaleCases } from './stale-cases.js';
import { registerUnshareableCases } from './unshareable-cases.js';
import { registerHttp2Cases } from './http2-cases.js';
import { registerResumeSuite } from './resume-suite.js';
import { registerStreamSuite } from './stream-suite.js';

export interface NeutralRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The body the handler sees (raw Buffer when the middleware read it). */
  body: unknown;
}

/** How the handler answers, expressed for every framework. */
export interface Reply {
  status?: number;
  headers?: Record<string, string | string[]>;
  /**
   * text: `res.send(string)` / `ctx.body = string`; json: `res.json` / object body; buffer: a Buffer;
   * stream: a Readable of `chunks` piped; chunks: `res.write` per chunk (Express) / a stream (Koa);
   * throw: the handler fails with an error of `status`; live: each piece of `live()` written as it is produced
   * (`res.write` (Express), a stream of it (Koa, Fastify)).
   */
  kind: 'text' | 'json' | 'buffer' | 'stream' | 'chunks' | 'empty' | 'throw' | 'live';
  body?: unknown;
  chunks?: Buffer[];
  live?: () => AsyncIterable<string>;
}

export type MiddlewareOptions = Omit<Partial<HttpFlightOptions<unknown>>, 'key'> & {
  key?: (req: NeutralRequest) => FlightKeySpec | null | undefined;
};

export interface ServerSetup {
  singleFlight: SingleFlight;
  stage: string;
  options?: MiddlewareOptions;
  /** Called for every request before the middleware. */
  onArrive?: () => void;
  handler: (req: NeutralRequest) => Promise<Reply> | Reply;
  /** Serve cleartext HTTP/2 (h2c) instead of HTTP/1.1 (drivers with `http2: true` only). */
  http2?: boolean;
}

export interface Driver {
  name: string;
  /**
   * Serves `setup` on `/r/*` on 127.0.0.1 (and `/direct/*` without the middleware). A request with an
   * `x-flight-purge` header, whatever its method, is answered `{ purged }` by the middleware's purge.
   */
  start(setup: ServerSetup): Promise<{ url: string; close(): Promise<void> }>;
  /** A `live` reply is a stream piped into the response (Koa, Fastify), not written by the handler itself. */
  livePiped?: boolean;
  /** The framework serves HTTP/2 (`ServerSetup.http2`): the suite runs its sharing cases over it too. */
  http2?: boolean;
  /** Builds the middleware alone (for option validation). */
  create(options: HttpFlightOptions<any>): unknown;
  /**
   * How a server process serves this driver (stream-node.ts): `module` exports `drivers`, this driver under
   * its `name`; `tsconfig` maps `@flight/*` to source.
   */
  process: { module: string; cwd: string; tsconfig: string };
}

interface Answer {
  status: number;
  headers: Headers;
  body: Buffer;
  role: string | null;
}

/** A request through `node:http`, which can send what fetch cannot: a `Host`, a header line repeated. */
function rawSend(url: string, options: { method?: string; headers?: OutgoingHttpHeaders; body?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: options.method ?? 'GET', headers: options.headers ?? {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(res.headers)) if (typeof value === 'string') headers.set(name, value);
        resolve({ status: res.statusCode!, headers, body: Buffer.concat(chunks), role: headers.get('x-flight-role') });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

async function send(url: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(url, init);
  const body = Buffer.from(await response.arrayBuffer());
  return { status: response.status, headers: response.headers, body, role: response.headers.get('x-flight-role') };
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

/** Registers the whole suite for one driver. */
export function registerMiddlewareSuite(driver: Driver): void {
  describe(driver.name, () => {
    registerStreamSuite(driver);
    registerResumeSuite(driver);
    registerFreshnessCases(driver);
    registerStaleCases(driver);
    registerUnshareableCases(driver);
    const servers: Array<{ close(): Promise<void> }> = [];
    const flights: SingleFlight[] = [];
    afterEach(async () => {
      await Promise.all(servers.splice(0).map((server) => server.close()));
      await Promise.all(flights.splice(0).map((flight) => flight.close()));
    });

    /**
     * Starts a server whose handler waits until `expected` requests have arrived (plus a short
     * grace so they have joined the flight): concurrency is deterministic, not timing-based.
     */
    async function serve(
      handler: ServerSetup['handler'],
      options: MiddlewareOptions = {},
      expected = 1,
      flightOptions?: SingleFlightOptions,
      http2 = false,
    ): Promise<{ url: string; calls: () => number; singleFlight: SingleFlight }> {
      const singleFlight = createSingleFlight(flightOptions);
      flights.push(singleFlight);
      let arrived = 0;
      let calls = 0;
      let wake: (() => void) | undefined;
      const allArrived = new Promise<void>((resolve) => (wake = resolve));
      const server = await driver.start({
        singleFlight,
        stage: 'http-test',
        options,
        http2,
        onArrive: () => {
          if (++arrived >= expected) wake?.();
        },
        handler: async (req) => {
          calls++;
          await Promise.race([allArrived, sleep(2000)]);
          await sleep(25);
          return handler(req);
        },
      });
      servers.push(server);
      return { url: server.url, calls: () => calls, singleFlight };
    }

    const many = (n: number, url: string, init?: RequestInit | ((i: number) => RequestInit)) =>
      Promise.all(Array.from({ length: n }, (_, i) => send(url, typeof init === 'function' ? init(i) : init)));

    it("answers the owner's client before the flight's result is stored; followers still get it once stored", async () => {
      const coordinator = createIoredisCoordinator({
        redis: 'redis://127.0.0.1:6379',
        prefix: `t:owner-release:${randomBytes(4).toString('hex')}:`,
      });
      const gated = gatedCompletion(coordinator);
      const singleFlight = createSingleFlight({ mode: 'distributed', coordinator: gated.coordinator });
      let calls = 0;
      const arrivals = countedEvents();
      const server = await driver.start({
        singleFlight,
        stage: 'owner-release',
        onArrive: () => arrivals.add(),
        handler: () => ({ kind: 'json', body: { report: ++calls } }),
      });
      // Without the early answer the owner's response would wait for the gate; open it late so the test ends.
      const fallback = setTimeout(() => gated.open(), 15_000);
      try {
        const owner = await send(`${server.url}/r/report`);
        expect({ opened: gated.state.opened, completing: gated.state.completing }).toEqual({ opened: false, completing: 1 });
        expect({ status: owner.status, role: owner.role, body: owner.body.toString() }).toEqual({
          status: 200,
          role: 'owner',
          body: '{"report":1}',
        });

        // The flight is still running (its result not stored): a second caller joins it and gets the same response.
        const follower = send(`${server.url}/r/report`);
        await arrivals.reach(2);
        await sleep(100); // past its arrival, into the flight it joins (the gate holds the run however long this takes)
        gated.open();
        const joined = await follower;
        expect({ status: joined.status, role: joined.role, body: joined.body.toString() }).toEqual({
          status: 200,
          role: 'follower',
          body: '{"report":1}',
        });
        expect(calls).toBe(1);
      } finally {
        clearTimeout(fallback);
        gated.open();
        await server.close();
        await singleFlight.close();
        await coordinator.close();
      }
    });

    it('purges one request key (cluster-wide forget): the next request to that URL runs the handler again', async () => {
      let n = 0;
      const { url, calls } = await serve(() => ({ kind: 'json', body: { n: ++n } }));
      const first = await send(`${url}/r/item?a=1`);
      const again = await send(`${url}/r/item?a=1`);
      expect(again.body.toString()).toBe(first.body.toString());
      expect(calls()).toBe(1);
      const purge = (path: string) => send(`${url}${path}`, { method: 'POST', headers: { 'x-flight-purge': '1' } });
      expect(JSON.parse((await purge('/r/item?a=1')).body.toString())).toEqual({ purged: true });
      const fresh = await send(`${url}/r/item?a=1`);
      expect(fresh.role).toBe('owner');
      expect(calls()).toBe(2);
      expect(fresh.body.toString()).not.toBe(first.body.toString());
      expect(JSON.parse((await purge('/r/never')).body.toString())).toEqual({ purged: false });
    });

    it('runs the handler once for concurrent identical GETs; all get the same response', async () => {
      const { url, calls } = await serve(() => ({ kind: 'json', body: { n: Math.random() } }), {}, 8);
      const answers = await many(8, `${url}/r/report?b=2&a=1`);
      expect(calls()).toBe(1);
      const bodies = new Set(answers.map((a) => a.body.toString()));
      expect(bodies.size).toBe(1);
      expect(answers.every((a) => a.status === 200)).toBe(true);
      expect(answers.map((a) => a.role).sort()).toEqual([...Array(7).fill('follower'), 'owner']);
      expect(answers.every((a) => a.headers.get('content-type')?.startsWith('application/json'))).toBe(true);
    });

    it('replays a stored result to a later request, and treats query order as the same request', async () => {
      const { url, calls } = await serve(() => ({ kind: 'text', body: `t${Math.random()}` }));
      const first = await send(`${url}/r/q?a=1&b=2`);
      const second = await send(`${url}/r/q?b=2&a=1`);
      expect(calls()).toBe(1);
      expect(second.body.equals(first.body)).toBe(true);
      expect(['replay', 'l1']).toContain(second.role);
    });

    it('shares streamed and binary bodies byte for byte', async () => {
      const chunks = Array.from({ length: 20 }, () => randomBytes(3000));
      const whole = Buffer.concat(chunks);
      for (const kind of ['stream', 'chunks', 'buffer'] as const) {
        const { url, calls } = await serve(
          () => ({ kind, chunks, body: whole, headers: { 'content-type': 'application/octet-stream' } }),
          {},
          5,
        );
        const answers = await many(5, `${url}/r/bin-${kind}`);
        expect(calls(), kind).toBe(1);
        for (const answer of answers) {
          expect(answer.status).toBe(200);
          expect(answer.body.equals(whole), kind).toBe(true);
          expect(answer.headers.get('content-type')).toBe('application/octet-stream');
        }
      }
    });

    it('coalesces HEAD separately from GET and keeps its Content-Length', async () => {
      const { url, calls } = await serve(() => ({ kind: 'text', body: 'hello head' }), {}, 4);
      const answers = await many(4, `${url}/r/head`, { method: 'HEAD' });
      expect(calls()).toBe(1);
      for (const answer of answers) {
        expect(answer.status).toBe(200);
        expect(answer.body.length).toBe(0);
        expect(answer.headers.get('content-length')).toBe('10');
      }
      const get = await send(`${url}/r/head`);
      expect(get.body.toString()).toBe('hello head');
      expect(get.role).toBe('owner');
    });

    it('never replays Set-Cookie or headers outside the allow-list', async () => {
      const { url } = await serve(
        () => ({ kind: 'text', body: 'ok', headers: { 'set-cookie': 'sid=secret', 'x-user': 'alice', etag: '"v1"' } }),
        {},
        4,
      );
      const answers = await many(4, `${url}/r/cookie`);
      const owner = answers.find((a) => a.role === 'owner')!;
      expect(owner.headers.get('set-cookie')).toBe('sid=secret');
      for (const follower of answers.filter((a) => a.role === 'follower')) {
        expect(follower.headers.get('set-cookie')).toBeNull();
        expect(follower.headers.get('x-user')).toBeNull();
        expect(follower.headers.get('etag')).toBe('"v1"');
        expect(follower.body.toString()).toBe('ok');
      }
    });

    it('never shares between different Authorization or Cookie headers by default', async () => {
      const { url, calls } = await serve(
        (req) => ({ kind: 'text', body: `for ${req.headers.authorization ?? req.headers.cookie}` }),
        {},
        4,
      );
      const answers = await many(4, `${url}/r/private`, (i): RequestInit => ({
        headers: i < 2 ? { authorization: `Bearer user-${i}` } : { cookie: `sid=user-${i}` },
      }));
      expect(calls()).toBe(4);
      expect(answers.map((a) => a.body.toString())).toEqual(['for Bearer user-0', 'for Bearer user-1', 'for sid=user-2', 'for sid=user-3']);
      expect(answers.every((a) => a.role === 'bypass')).toBe(true);
    });

    it('coalesces credentialed requests per identity when the key says who they are for', async () => {
      const { url, calls } = await serve(
        (req) => ({ kind: 'text', body: `for ${req.headers.authorization}:${Math.random()}` }),
        {
          key: (req) => ({ identity: String(req.headers.authorization) }),
        },
        6,
      );
      const answers = await many(6, `${url}/r/me`, (i) => ({ headers: { authorization: `Bearer u${i % 2}` } }));
      expect(calls()).toBe(2);
      for (const [i, answer] of answers.entries()) expect(answer.body.toString()).toMatch(new RegExp(`^for Bearer u${i % 2}:`));
    });

    it('never shares Cache-Control private or no-store responses', async () => {
      for (const cacheControl of ['private, max-age=60', 'no-store']) {
        const { url, calls } = await serve(() => ({ kind: 'text', body: 'mine', headers: { 'cache-control': cacheControl } }), {}, 3);
        const answers = await many(3, `${url}/r/cc`);
        expect(calls(), cacheControl).toBe(3);
        expect(answers.every((a) => a.status === 200 && a.body.toString() === 'mine')).toBe(true);
        expect(answers.filter((a) => a.role === 'owner')).toHaveLength(1);
      }
    });

    it('keeps representation headers in the key and never coalesces Range requests', async () => {
      const { url, calls } = await serve((req) => ({ kind: 'text', body: `lang ${req.headers['accept-language']}` }), {}, 4);
      const answers = await many(4, `${url}/r/lang`, (i) => ({ headers: { 'accept-language': i % 2 ? 'fr' : 'de' } }));
      expect(calls()).toBe(2);
      for (const [i, answer] of answers.entries()) expect(answer.body.toString()).toBe(`lang ${i % 2 ? 'fr' : 'de'}`);
      const ranged = await serve(() => ({ kind: 'text', body: 'r' }), {}, 2);
      const rangeAnswers = await many(2, `${ranged.url}/r/range`, { headers: { range: 'bytes=0-0' } });
      expect(ranged.calls()).toBe(2);
      expect(rangeAnswers.every((a) => a.role === 'bypass')).toBe(true);
    });

    it("error statuses: followers run the handler themselves with onUnshareable 'run'", async () => {
      const { url, calls } = await serve(() => ({ kind: 'text', status: 503, body: 'busy' }), {}, 4);
      const answers = await many(4, `${url}/r/err-run`);
      expect(calls()).toBe(4);
      expect(answers.every((a) => a.status === 503 && a.body.toString() === 'busy')).toBe(true);
    });

    it("error statuses: followers get the owner's failure with onUnshareable 'fail'", async () => {
      const { url, calls } = await serve(() => ({ kind: 'throw', status: 500 }), { onUnshareable: 'fail' }, 4);
      const answers = await many(4, `${url}/r/err-fail`);
      expect(calls()).toBe(1);
      expect(answers.every((a) => a.status === 500)).toBe(true);
      const followers = answers.filter((a) => a.role === 'follower');
      expect(followers).toHaveLength(3);
      for (const follower of followers) expect(JSON.parse(follower.body.toString()).code).toBe('E_FLIGHT_HTTP_SHARED_FAILURE');
    });

    it('shares the statuses listed in shareStatuses', async () => {
      const { url, calls } = await serve(() => ({ kind: 'text', status: 404, body: 'none' }), { shareStatuses: [200, 404] }, 3);
      const answers = await many(3, `${url}/r/404`);
      expect(calls()).toBe(1);
      expect(answers.every((a) => a.status === 404 && a.body.toString() === 'none')).toBe(true);
    });

    it('does not share a body above maxBodyBytes: the owner streams it, followers run the handler', async () => {
      const body = randomBytes(50_000);
      const chunks = Array.from({ length: 10 }, (_, i) => body.subarray(i * 5000, (i + 1) * 5000));
      const { url, calls } = await serve(() => ({ kind: 'stream', chunks }), { maxBodyBytes: 10_000 }, 3);
      const answers = await many(3, `${url}/r/big`);
      expect(calls()).toBe(3);
      expect(answers.every((a) => a.status === 200 && a.body.equals(body))).toBe(true);
    });

    it("a route slower than the guard timeout: its client gets the handler's own response, joined callers a typed 504; never a 404", async () => {
      const { url, calls } = await serve(
        async () => {
          await sleep(800);
          return { kind: 'json', status: 200, body: { slow: 'done' } };
        },
        {},
        3,
        { defaults: { guard: { timeoutMs: 300 } } },
      );
      const answers = await many(3, `${url}/r/slow`);
      expect(calls()).toBe(1);
      const owner = answers.find((a) => a.role === 'owner');
      expect(owner?.status).toBe(200);
      expect(JSON.parse(owner!.body.toString())).toEqual({ slow: 'done' });
      const followers = answers.filter((a) => a !== owner);
      expect(followers.map((a) => a.status)).toEqual([504, 504]);
      for (const follower of followers) {
        expect(follower.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(JSON.parse(follower.body.toString()).code).toBe('E_FLIGHT_HTTP_TIMEOUT');
      }
      expect(answers.some((a) => a.status === 404)).toBe(false);
    });

    for (const onUnshareable of ['run', 'fail'] as const) {
      it(`an error response is not replayed to later callers (onUnshareable '${onUnshareable}'): the next burst runs the handler once`, async () => {
        let runs = 0;
        const { url, calls } = await serve(
          () => (++runs === 1 ? { kind: 'text', status: 503, body: 'busy' } : { kind: 'text', body: `ok ${runs}` }),
          { onUnshareable },
          5,
        );
        const first = await many(5, `${url}/r/flaky-${onUnshareable}`);
        expect(first.filter((a) => a.role === 'owner').map((a) => a.status)).toEqual([503]);
        const before = calls();
        const second = await many(5, `${url}/r/flaky-${onUnshareable}`);
        expect(calls() - before).toBe(1);
        expect(second.every((a) => a.status === 200)).toBe(true);
        expect(new Set(second.map((a) => a.body.toString())).size).toBe(1);
      });
    }

    it('an error response is never replayed, whatever the stage counts as retryable (no failure type steers it)', async () => {
      let runs = 0;
      const { url, calls } = await serve(
        () => (++runs === 1 ? { kind: 'text', status: 500, body: 'broken' } : { kind: 'text', body: `ok ${runs}` }),
        {},
        5,
        { mode: 'distributed', coordinator: createMemoryCoordinator(), defaults: { retryableFailures: [], failureTtlMs: 60_000 } },
      );
      const first = await many(5, `${url}/r/never-kept`);
      expect(first.filter((a) => a.role === 'owner').map((a) => a.status)).toEqual([500]);
      const before = calls();
      const second = await many(5, `${url}/r/never-kept`);
      expect(calls() - before).toBe(1);
      expect(second.every((a) => a.status === 200)).toBe(true);
    });

    it('never shares between different Hosts by default (shareAcrossHosts opts in)', async () => {
      const { url, calls } = await serve((req) => ({ kind: 'text', body: `host ${req.headers.host}` }), {}, 4);
      const answers = await Promise.all(
        [0, 1, 2, 3].map((i) => rawSend(`${url}/r/vhost`, { headers: { host: i % 2 ? 'a.example' : 'b.example' } })),
      );
      expect(calls()).toBe(2);
      for (const [i, answer] of answers.entries()) expect(answer.body.toString()).toBe(`host ${i % 2 ? 'a.example' : 'b.example'}`);
      const shared = await serve((req) => ({ kind: 'text', body: `host ${req.headers.host}` }), { shareAcrossHosts: true }, 2);
      await Promise.all([0, 1].map((i) => rawSend(`${shared.url}/r/vhost`, { headers: { host: `h${i}.example` } })));
      expect(shared.calls()).toBe(1);
    });

    it('treats X-API-Key and X-Auth-Token as credentials by default; the list is an option', async () => {
      const { url, calls } = await serve(
        (req) => ({ kind: 'text', body: `for ${req.headers['x-api-key'] ?? req.headers['x-auth-token']}` }),
        {},
        4,
      );
      const answers = await many(4, `${url}/r/keyed`, (i): RequestInit => ({
        headers: i < 2 ? { 'x-api-key': `key-${i}` } : { 'x-auth-token': `token-${i}` },
      }));
      expect(calls()).toBe(4);
      expect(answers.map((a) => a.body.toString())).toEqual(['for key-0', 'for key-1', 'for token-2', 'for token-3']);
      expect(answers.every((a) => a.role === 'bypass')).toBe(true);
      const custom = await serve(
        (req) => ({ kind: 'text', body: `t ${req.headers['x-tenant-secret']}` }),
        { credentialHeaders: ['x-tenant-secret'] },
        2,
      );
      const customAnswers = await many(2, `${custom.url}/r/tenant`, (i) => ({ headers: { 'x-tenant-secret': `s${i}` } }));
      expect(custom.calls()).toBe(2);
      expect(customAnswers.every((a) => a.role === 'bypass')).toBe(true);
    });

    it('never coalesces unsafe methods without an idempotency key', async () => {
      const { url, calls } = await serve(() => ({ kind: 'text', body: 'created', status: 201 }), {}, 3);
      const answers = await many(3, `${url}/r/post`, { method: 'POST', body: 'x' });
      expect(calls()).toBe(3);
      expect(answers.every((a) => a.role === 'bypass' && a.status === 201)).toBe(true);
      expect(() => driver.create({ singleFlight: createSingleFlight(), stage: 's', methods: ['POST'] })).toThrow(FlightValidationError);
      expect(() => driver.create({ singleFlight: createSingleFlight(), stage: 's', replayHeaders: ['set-cookie'] })).toThrow(
        /never replayed/,
      );
      expect(() => driver.create({ singleFlight: createSingleFlight(), stage: 'bad stage' })).toThrow(FlightValidationError);
    });

    it('refuses option typos and a missing singleFlight when created, naming the option meant', () => {
      const singleFlight = createSingleFlight();
      flights.push(singleFlight);
      const typo = () => driver.create({ singleFlight, stage: 's', replayHeader: ['etag'] } as never);
      expect(typo).toThrow(FlightConfigurationError);
      expect(typo).toThrow('unknown option "replayHeader" (did you mean "replayHeaders"?)');
      expect(() => driver.create({ singleFlight, stage: 's', idempotency: { inflight: 'conflict' } } as never)).toThrow(
        'did you mean "inFlight"?',
      );
      expect(() => driver.create({ stage: 's' } as never)).toThrow(FlightConfigurationError);
    });

    describe('Idempotency-Key', () => {
      const post = (url: string, key: string | undefined, body: string, headers: Record<string, string> = {}) =>
        send(url, {
          method: 'POST',
          body,
          headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { 'idempotency-key': key }), ...headers },
        });

      it('runs concurrent duplicates once and replays the result to a retry', async () => {
        let n = 0;
        const { url, calls } = await serve(
          (req) => ({ kind: 'json', status: 201, body: { order: ++n, got: Buffer.from(req.body as Buffer).toString() } }),
          { idempotency: true },
          4,
        );
        const answers = await Promise.all(Array.from({ length: 4 }, () => post(`${url}/r/orders`, '"k-1"', '{"qty":1}')));
        expect(calls()).toBe(1);
        expect(answers.every((a) => a.status === 201)).toBe(true);
        expect(new Set(answers.map((a) => a.body.toString())).size).toBe(1);
        expect(JSON.parse(answers[0]!.body.toString())).toEqual({ order: 1, got: '{"qty":1}' });
        const retry = await post(`${url}/r/orders`, '"k-1"', '{"qty":1}');
        expect(calls()).toBe(1);
        expect(retry.body.equals(answers[0]!.body)).toBe(true);
        expect(['replay', 'l1']).toContain(retry.role);
      });

      it('answers 422 when a key is reused with a different payload', async () => {
        const { url, calls } = await serve(() => ({ kind: 'json', status: 201, body: { ok: true } }), { idempotency: true });
        expect((await post(`${url}/r/pay`, '"key-2"', '{"amount":1}')).status).toBe(201);
        const reused = await post(`${url}/r/pay`, '"key-2"', '{"amount":2}');
        expect(reused.status).toBe(422);
        expect(JSON.parse(reused.body.toString()).code).toBe('E_FLIGHT_HTTP_IDEMPOTENCY_KEY_REUSED');
        expect(calls()).toBe(1);
      });

      it('answers 400 for a missing, malformed or oversized key', async () => {
        const { url, calls } = await serve(() => ({ kind: 'text', body: 'x' }), { idempotency: true });
        const missing = await post(`${url}/r/k`, undefined, '{}');
        expect(missing.status).toBe(400);
        expect(JSON.parse(missing.body.toString()).code).toBe('E_FLIGHT_HTTP_IDEMPOTENCY_KEY_MISSING');
        for (const bad of ['"unterminated', '""', 'a'.repeat(256), 'has space']) {
          const answer = await post(`${url}/r/k`, bad, '{}');
          expect(answer.status, bad).toBe(400);
          expect(JSON.parse(answer.body.toString()).code).toBe('E_FLIGHT_HTTP_IDEMPOTENCY_KEY_INVALID');
        }
        expect(calls()).toBe(0);
      });

      it('answers 400 to a repeated Idempotency-Key header and to an invalid sf-string', async () => {
        const { url, calls } = await serve(() => ({ kind: 'text', status: 201, body: 'x' }), { idempotency: true });
        const headers = (key: string | string[]) => ({ 'content-type': 'application/json', 'idempotency-key': key });
        for (const key of [['"a1"', '"b2"'], '"a1", "b2"', '"ab"cd"', 'bare-token']) {
          const answer = await rawSend(`${url}/r/rep`, { method: 'POST', headers: headers(key), body: '{}' });
          expect(answer.status, JSON.stringify(key)).toBe(400);
          expect(JSON.parse(answer.body.toString()).code).toBe('E_FLIGHT_HTTP_IDEMPOTENCY_KEY_INVALID');
        }
        expect(calls()).toBe(0);
        expect((await rawSend(`${url}/r/rep`, { method: 'POST', headers: headers('"a1"'), body: '{}' })).status).toBe(201);
      });

      it('hybrid mode: a node cut off from Redis never runs an idempotent request (503, Retry-After, not run); one that reaches Redis runs it once', async () => {
        const prefix = `flight-test:http-idem:${randomBytes(4).toString('hex')}`;
        const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
        const hybrid = (redis: string): SingleFlightOptions => ({
          coordinator: createIoredisCoordinator({ redis, prefix, commandTimeoutMs: 300 }),
          mode: 'hybrid',
        });
        let orders = 0;
        const handler = (req: NeutralRequest): Reply =>
          req.method === 'POST' ? { kind: 'json', status: 201, body: { order: ++orders } } : { kind: 'text', body: 'safe' };
        // Port 1 on loopback: nothing listens there, every call is refused.
        const cutOff = await serve(handler, { idempotency: true }, 1, hybrid('redis://127.0.0.1:1'));
        const healthy = await serve(handler, { idempotency: true }, 1, hybrid(redisUrl));
        const body = '{"item":"book"}';

        const refused = await post(`${cutOff.url}/r/orders`, '"order-7"', body);
        expect(refused.status).toBe(503);
        expect(refused.headers.get('retry-after')).toBe('1');
        expect(JSON.parse(refused.body.toString())).toMatchObject({ code: 'E_FLIGHT_HTTP_UNAVAILABLE', notRun: true });
        expect(orders).toBe(0);

        const created = await post(`${healthy.url}/r/orders`, '"order-7"', body);
        expect(created.status).toBe(201);
        // Safe coalescing on the cut-off node still falls back in-process, which starts its fallback cooldown…
        const safe = await send(`${cutOff.url}/r/catalog`);
        expect(safe).toMatchObject({ status: 200, role: 'local' });
        expect(cutOff.singleFlight.degraded).toBe(true);
        // …during which the retried POST is still refused there, not run a second time.
        expect((await post(`${cutOff.url}/r/orders`, '"order-7"', body)).status).toBe(503);
        expect(orders).toBe(1);
      });

      it("answers 409 to an in-flight duplicate with inFlight: 'conflict'", async () => {
        const { url, calls } = await serve(
          () => ({ kind: 'text', status: 201, body: 'done' }),
          { idempotency: { inFlight: 'conflict' } },
          2,
        );
        const answers = await Promise.all([post(`${url}/r/c`, '"k3"', '{}'), post(`${url}/r/c`, '"k3"', '{}')]);
        expect(calls()).toBe(1);
        expect(answers.map((a) => a.status).sort()).toEqual([201, 409]);
        expect(JSON.parse(answers.find((a) => a.status === 409)!.body.toString()).code).toBe('E_FLIGHT_HTTP_IDEMPOTENCY_IN_FLIGHT');
      });

      it('scopes keys per identity: another client reusing a key never gets the first response', async () => {
        const { url, calls } = await serve((req) => ({ kind: 'text', status: 201, body: `for ${req.headers.authorization}` }), {
          idempotency: true,
          key: (req) => ({ identity: String(req.headers.authorization).split(' ')[1] }),
        });
        const a = await post(`${url}/r/s`, '"same"', '{}', { authorization: 'Bearer a' });
        const b = await post(`${url}/r/s`, '"same"', '{}', { authorization: 'Bearer b' });
        expect(calls()).toBe(2);
        expect(a.body.toString()).toBe('for Bearer a');
        expect(b.body.toString()).toBe('for Bearer b');
      });

      it('one client retrying with refreshed credentials (a new token, a new cookie) runs once under its identity', async () => {
        let charged = 0;
        const { url, calls } = await serve(() => ({ kind: 'json', status: 201, body: { charge: ++charged } }), {
          idempotency: true,
          // The application's own notion of who is calling (here: the user named in the token), not the token itself.
          key: (req) => ({ identity: String(req.headers.authorization ?? req.headers.cookie).split(':')[0]! }),
        });
        const attempts: Record<string, string>[] = [
          { authorization: 'ada:token-1' },
          { authorization: 'ada:token-2' },
          { cookie: 'ada:session-3' },
        ];
        const answers = [];
        for (const headers of attempts) answers.push(await post(`${url}/r/charge`, '"charge-1"', '{"amount":5}', headers));
        expect(calls()).toBe(1);
        expect(answers.map((a) => [a.status, a.body.toString()])).toEqual(Array(3).fill([201, '{"charge":1}']));
      });

      it('refuses a credentialed request without an identity (500, typed, not run): raw credentials would run a refreshed retry again', async () => {
        const { url, calls } = await serve(() => ({ kind: 'json', status: 201, body: { ok: true } }), { idempotency: true });
        for (const headers of [{ authorization: 'Bearer t1' }, { authorization: 'Bearer t2' }, { cookie: 'sid=1' }] as Record<
          string,
          string
        >[]) {
          const answer = await post(`${url}/r/no-identity`, '"k-9"', '{}', headers);
          expect(answer.status).toBe(500);
          const problem = JSON.parse(answer.body.toString()) as { code: string; title: string; notRun: boolean };
          expect(problem).toMatchObject({ code: 'E_FLIGHT_HTTP_IDEMPOTENCY_IDENTITY_REQUIRED', notRun: true });
          expect(problem.title).toContain('key: (req) => ({ identity');
        }
        expect(calls()).toBe(0);
        // Without credentials, or with the credential list emptied on purpose, the key alone identifies the client.
        expect((await post(`${url}/r/no-identity`, '"k-9"', '{}')).status).toBe(201);
        const open = await serve(() => ({ kind: 'json', status: 201, body: { ok: true } }), { idempotency: true, credentialHeaders: [] });
        expect((await post(`${open.url}/r/open`, '"k-10"', '{}', { authorization: 'Bearer t1' })).status).toBe(201);
      });
    });

    it('refuses a 10 MB request body cleanly with 413 (declared or streamed)', async () => {
      const { url, calls } = await serve(() => ({ kind: 'text', body: 'never' }), { idempotency: true });
      const declared = await send(`${url}/r/upload`, {
        method: 'POST',
        body: Buffer.alloc(10 * 1024 * 1024, 1),
        headers: { 'idempotency-key': '"u1"' },
      });
      expect(declared.status).toBe(413);
      expect(JSON.parse(declared.body.toString()).code).toBe('E_FLIGHT_HTTP_BODY_TOO_LARGE');
      const piece = Buffer.alloc(1024 * 1024, 2);
      let sent = 0;
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent++ < 10) controller.enqueue(piece);
          else controller.close();
        },
      });
      const streamed = await send(`${url}/r/upload`, {
        method: 'POST',
        body: stream,
        headers: { 'idempotency-key': '"u2"' },
        duplex: 'half',
      } as RequestInit);
      expect(streamed.status).toBe(413);
      expect(calls()).toBe(0);
    });

    it('after a 413 on a declared 10 MB body it reads the rest the client sends instead of resetting it mid-upload (the connection lives on)', async () => {
      const { url, calls } = await serve(() => ({ kind: 'text', body: 'fine' }), { idempotency: true });
      const { port } = new URL(url);
      const socket = connect(Number(port), '127.0.0.1');
      let received = '';
      let closedByServer = false;
      socket.setEncoding('utf8');
      socket.on('data', (piece: string) => (received += piece));
      socket.on('end', () => (closedByServer = true));
      socket.on('error', () => (closedByServer = true));
      await once(socket, 'connect');
      const length = 10 * 1024 * 1024;
      socket.write(`POST /r/upload HTTP/1.1\r\nHost: app.example\r\nIdempotency-Key: "u3"\r\nContent-Length: ${length}\r\n\r\n`);
      // The answer comes from the declared length, before the body.
      for (let i = 0; i < 100 && !received.includes('\r\n\r\n'); i++) await sleep(10);
      expect(received).toMatch(/^HTTP\/1\.1 413 /);
      // The client, which cannot know yet, goes on sending its body a MiB at a time.
      const piece = Buffer.alloc(1024 * 1024, 3);
      for (let sent = 0; sent < length && !closedByServer; sent += piece.length) {
        await new Promise<void>((resolve) => socket.write(piece, () => resolve()));
        await sleep(5);
      }
      expect(closedByServer).toBe(false);
      // The same connection then carries the next request.
      received = '';
      socket.write('GET /direct/after HTTP/1.1\r\nHost: app.example\r\nConnection: close\r\n\r\n');
      await once(socket, 'end');
      expect(received).toMatch(/^HTTP\/1\.1 200 /);
      expect(calls()).toBe(1);
      socket.destroy();
    });

    it('a follower whose client goes away stops waiting; the owner and other followers are not disturbed', async () => {
      const { url, calls } = await serve(
        async () => {
          await sleep(150);
          return { kind: 'text', body: 'steady' };
        },
        {},
        3,
      );
      const gone = new AbortController();
      const owner = send(`${url}/r/dc`);
      await sleep(20);
      const leaving = send(`${url}/r/dc`, { signal: gone.signal }).catch((error: Error) => error);
      const staying = send(`${url}/r/dc`);
      await sleep(20);
      gone.abort();
      expect(await leaving).toBeInstanceOf(Error);
      const [a, b] = await Promise.all([owner, staying]);
      expect(calls()).toBe(1);
      expect(a.body.toString()).toBe('steady');
      expect(b.body.toString()).toBe('steady');
      expect(b.role).toBe('follower');
    });

    it('an owner whose client goes away still finishes and shares its response', async () => {
      const { url, calls } = await serve(
        async () => {
          await sleep(150);
          return { kind: 'text', body: 'finished' };
        },
        {},
        2,
      );
      const gone = new AbortController();
      const owner = send(`${url}/r/odc`, { signal: gone.signal }).catch((error: Error) => error);
      await sleep(20);
      const follower = send(`${url}/r/odc`);
      await sleep(20);
      gone.abort();
      expect(await owner).toBeInstanceOf(Error);
      const answer = await follower;
      expect(answer.body.toString()).toBe('finished');
      expect(answer.role).toBe('follower');
      expect(calls()).toBe(1);
      const later = await send(`${url}/r/odc`);
      expect(later.body.toString()).toBe('finished');
      expect(calls()).toBe(1);
    });

    if (driver.http2) {
      registerHttp2Cases((handler, options, expected) => serve(handler, options, expected, undefined, true));
    }

    if (driver.livePiped) {
      /** An endless live body that counts what it produced and whether it was stopped. */
      const endless = () => {
        const state = { produced: 0, stopped: false };
        const live = async function* () {
          try {
            for (;;) {
              await sleep(10);
              yield `piece ${++state.produced}\n`;
            }
          } finally {
            state.stopped = true;
          }
        };
        return { state, live };
      };
      /** Reads the first piece of `url`, then goes away. */
      const readOneAndLeave = (url: string) =>
        new Promise<void>((resolve, reject) => {
          const req = httpRequest(url, (res) => res.once('data', () => (req.destroy(), resolve())));
          req.on('error', (error) => (req.destroyed ? resolve() : reject(error)));
          req.end();
        });

      it('an endless streamed body whose client left is destroyed when its run is given up (maxRunMs), not read for nobody', async () => {
        const { state, live } = endless();
        const { url } = await serve(() => ({ kind: 'live', live }), { stream: true }, 1, {
          defaults: { maxRunMs: 700, heartbeatIntervalMs: 500, takeoverAfterMs: 1500, l1: { enabled: false } },
        });
        await readOneAndLeave(`${url}/r/endless`);
        await vi.waitFor(() => expect(state.stopped).toBe(true), WAIT_FOR_EFFECT);
        const produced = state.produced;
        await sleep(200);
        expect(state.produced).toBe(produced);
      });

      it('an endless streamed body whose client left is destroyed when the server closes', async () => {
        const { state, live } = endless();
        const singleFlight = createSingleFlight({ defaults: { l1: { enabled: false } } });
        flights.push(singleFlight);
        const server = await driver.start({
          singleFlight,
          stage: 'http-test',
          options: { stream: true },
          handler: () => ({ kind: 'live', live }),
        });
        await readOneAndLeave(`${server.url}/r/endless-close`);
        await sleep(100);
        expect(state.stopped).toBe(false);
        await server.close();
        await vi.waitFor(() => expect(state.stopped).toBe(true), WAIT_FOR_EFFECT);
      });
    }

    it('property: a coalesced response equals the direct one', async () => {
      const reply = fc.record({
        status: fc.constantFrom(200, 201, 203, 206, 404, 500),
        kind: fc.constantFrom('text', 'json', 'buffer', 'stream', 'chunks', 'empty') as fc.Arbitrary<Reply['kind']>,
        text: fc.string({ maxLength: 200 }),
        bytes: fc.uint8Array({ maxLength: 3000 }),
        json: fc.jsonValue({ maxDepth: 2 }),
        contentType: fc.constantFrom(undefined, 'text/plain; charset=utf-8', 'application/x-thing'),
      });
      let current: Reply = { kind: 'empty' };
      const singleFlight = createSingleFlight({ defaults: { l1: { enabled: false }, resultTtlMs: 1 } });
      let arrived = 0;
      const server = await driver.start({
        singleFlight,
        stage: 'http-prop',
        options: { shareStatuses: (status) => status < 600 },
        onArrive: () => arrived++,
        handler: async () => {
          await sleep(15);
          return current;
        },
      });
      servers.push(server);
      let run = 0;
      await fc.assert(
        fc.asyncProperty(reply, async (r) => {
          const chunks = [Buffer.from(r.bytes.subarray(0, 1000)), Buffer.from(r.bytes.subarray(1000))];
          current = {
            status: r.status,
            kind: r.kind,
            headers: r.contentType ? { 'content-type': r.contentType } : {},
            body: r.kind === 'text' ? r.text : r.kind === 'json' ? { value: r.json } : Buffer.from(r.bytes),
            chunks,
          };
          const path = `p${run++}`;
          const direct = await send(`${server.url}/direct/${path}`);
          const coalesced = await many(3, `${server.url}/r/${path}`);
          for (const answer of coalesced) {
            expect(answer.status).toBe(direct.status);
            expect(answer.body.equals(direct.body)).toBe(true);
            expect(answer.headers.get('content-type')).toBe(direct.headers.get('content-type'));
          }
        }),
        { numRuns: 25 },
      );
      expect(arrived).toBeGreaterThan(0);
    });
  });
}

export { once };
