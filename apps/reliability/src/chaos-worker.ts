/**
 * One node of the chaos run: createSingleFlight (hybrid) over the ioredis coordinator (or the node-redis one,
 * when the run says so), with an upstream
 * whose only right answer is `v:<key>`, called directly (`call`) and through two Express routes behind
 * `@flight/express`: a slow route whose stage times out before the handler answers (`slow`), and an
 * idempotent POST under `Idempotency-Key` (`post`), each attempt with a freshly refreshed bearer token (the
 * middleware keys it by the client the token names); a Koa route behind `@flight/koa` on an HTTP/2 (h2c)
 * server, asked over one multiplexed HTTP/2 session with a tenant in `:authority` (`h2`: the answer names the
 * tenant, so a response shared across tenants is wrong); and `forget` of a direct call's key (L1 is on). JSON
 * lines in (requests) and out (replies, upstream calls, idempotent runs, unhandled rejections). Started by
 * chaos-run.ts with `node --import tsx`.
 */
import { connect as connectHttp2, createServer as createHttp2Server, type ClientHttp2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { createInterface } from 'node:readline';
import { createSingleFlight, FlightError } from '@flight/core';
import { randomUUID } from 'node:crypto';
import { createFlightMiddleware } from '@flight/express';
import { createFlightMiddleware as createKoaFlightMiddleware } from '@flight/koa';
import { createIoredisCoordinator } from '@flight/redis-ioredis';
import { createNodeRedisCoordinator } from '@flight/redis-node';
import express from 'express';
import Koa from 'koa';
import { createSentinel } from 'redis';
import { CHAOS_HEARTBEAT_INTERVAL_MS, CHAOS_TAKEOVER_AFTER_MS } from './chaos-policy.js';

const SLOW_STAGE = 'chaos-slow';
/** The slow stage's guard timeout: the slow route's handler takes longer than this. */
const SLOW_GUARD_MS = 150;

const config = JSON.parse(process.env.FLIGHT_CHAOS_NODE ?? '{}') as {
  /** Redis (through the run's proxy for this node), unless `sentinel`. */
  url?: string;
  /** The Sentinels and the name they monitor the primary under. */
  sentinel?: { name: string; sentinels: { host: string; port: number }[] };
  nodeId: string;
  prefix: string;
  /** The Redis client library of this node. @default 'ioredis' */
  client?: 'ioredis' | 'node-redis';
};
/** Closes what the coordinator does not (a client given to it). */
let closeLast: () => Promise<unknown> = async () => undefined;
const send = (message: object) => process.stdout.write(`${JSON.stringify(message)}\n`);

process.on('unhandledRejection', (reason) => send({ event: 'unhandled', error: String(reason) }));
process.on('uncaughtException', (error) => {
  send({ event: 'unhandled', error: `uncaught: ${String(error)}` });
});

const coordinator = await createCoordinator();
const flight = createSingleFlight({
  coordinator,
  mode: 'hybrid',
  nodeId: config.nodeId,
  fallbackCooldownMs: 500,
  defaults: {
    heartbeatIntervalMs: CHAOS_HEARTBEAT_INTERVAL_MS,
    takeoverAfterMs: CHAOS_TAKEOVER_AFTER_MS,
    pollIntervalMs: 250,
    waitTimeoutMs: 8000,
    maxRunMs: 20_000,
    l1: { enabled: true, ttlMs: 5000 },
    guard: { retry: false, timeoutMs: 10_000, circuitBreaker: false, bulkhead: false },
  },
  stages: {
    // The slow route's runs are cut off by the guard well before its handler answers.
    [SLOW_STAGE]: { guard: { retry: false, timeoutMs: SLOW_GUARD_MS, circuitBreaker: false, bulkhead: false }, l1: { enabled: false } },
  },
});

/** The node's coordinator, over the client the run gave it (through the Sentinels, or its proxy's URL). */
async function createCoordinator() {
  const common = { prefix: config.prefix, commandTimeoutMs: 500 };
  if (config.client !== 'node-redis') {
    return createIoredisCoordinator({ redis: { ...(config.sentinel ?? parse(config.url!)), maxRetriesPerRequest: 1 }, ...common });
  }
  if (!config.sentinel) return createNodeRedisCoordinator({ redis: { url: config.url! }, ...common });
  const client = createSentinel({ name: config.sentinel.name, sentinelRootNodes: config.sentinel.sentinels });
  client.on('error', () => undefined);
  await client.connect();
  closeLast = () => client.close();
  return createNodeRedisCoordinator({ client, ...common });
}

function parse(url: string) {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port) };
}

async function handle(request: { id: number; key: string; workMs: number }) {
  try {
    const result = await flight.execute('chaos', request.key, async (ctx) => {
      const startedAt = Date.now();
      send({ event: 'upstream', key: request.key });
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, request.workMs);
        ctx.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve();
        });
      });
      if (ctx.signal.aborted) throw ctx.signal.reason;
      // When and where this run started: the runner checks that no caller after a forget gets an older run.
      return `v:${request.key}|${startedAt}|${config.nodeId}`;
    });
    send({ id: request.id, ok: true, value: result.value, role: result.role });
  } catch (error) {
    send({ id: request.id, ok: false, code: error instanceof FlightError ? error.code : `untyped:${String(error)}` });
  }
}

// The three nodes are one service on three ports (as behind a load balancer): they share across hosts.
const app = express();
app.get('/slow/:key', createFlightMiddleware({ singleFlight: flight, stage: SLOW_STAGE, shareAcrossHosts: true }), async (req, res) => {
  send({ event: 'upstream', key: `slow:${req.params.key}` });
  await sleep(SLOW_GUARD_MS + Number(req.query.workMs ?? 0));
  res.type('text').send(`v:${req.params.key}`);
});
app.post(
  '/order/:key',
  createFlightMiddleware({
    singleFlight: flight,
    stage: 'chaos-order',
    idempotency: { required: true },
    shareAcrossHosts: true,
    // Who the client is (the token's subject), not the token: every attempt carries a freshly refreshed one.
    key: (req) => ({ identity: String(req.headers.authorization).split(':')[0] }),
  }),
  async (req, res) => {
    // When the run began, stamped here: the runner reads the line later, by as much as it is busy.
    send({ event: 'idempotent-run', key: req.params.key, at: Date.now() });
    await sleep(Number(req.query.workMs ?? 0));
    res.type('text').send(`v:${req.params.key}`);
  },
);
const server = app.listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

// The HTTP/2 route: the tenant is the request's `:authority`, which the key holds (no shareAcrossHosts).
const koa = new Koa();
koa.use(createKoaFlightMiddleware({ singleFlight: flight, stage: 'chaos-h2' }));
koa.use(async (ctx) => {
  const key = ctx.path.slice('/h2/'.length);
  send({ event: 'upstream', key: `h2:${key}` });
  await sleep(Number(ctx.get('x-work-ms') || 0));
  ctx.type = 'text';
  ctx.body = `v:${key}@${ctx.get(':authority') || ctx.host}`;
});
const koaCallback = koa.callback();
const h2Server = createHttp2Server((req, res) => void koaCallback(req, res));
h2Server.listen(0, '127.0.0.1');
await new Promise((resolve) => h2Server.once('listening', resolve));
const h2Base = `http://127.0.0.1:${(h2Server.address() as AddressInfo).port}`;
let h2Session: ClientHttp2Session | undefined;

/** A GET over this node's one HTTP/2 session (opened again when it broke), for `tenant`. */
function h2Get(
  path: string,
  tenant: string,
  workMs: number,
): Promise<{ status: number; body: string; role: string | undefined; type: string }> {
  if (!h2Session || h2Session.closed || h2Session.destroyed) {
    h2Session = connectHttp2(h2Base);
    h2Session.on('error', () => {});
  }
  const session = h2Session;
  return new Promise((resolve, reject) => {
    // The work time rides in a header, outside the key: requests of one path by one tenant share a run.
    const stream = session.request({ ':path': path, ':authority': tenant, 'x-work-ms': String(workMs) });
    let head: Record<string, unknown> = {};
    let body = '';
    stream.setEncoding('utf8');
    stream.on('response', (headers) => (head = headers));
    stream.on('data', (piece: string) => (body += piece));
    stream.on('end', () =>
      resolve({
        status: Number(head[':status']),
        body,
        role: head['x-flight-role'] as string | undefined,
        type: String(head['content-type'] ?? ''),
      }),
    );
    stream.on('error', reject);
  });
}

/** An HTTP/2 request; a 2xx must carry `v:<key>@<tenant>`, anything else a typed error code. */
async function handleH2(request: { id: number; key: string; workMs: number; tenant: string }) {
  try {
    const response = await h2Get(`/h2/${request.key}`, request.tenant, request.workMs);
    if (response.status >= 200 && response.status < 300)
      return send({ id: request.id, ok: true, value: response.body, role: response.role });
    const code = response.type.includes('problem+json') ? (JSON.parse(response.body) as { code?: string }).code : undefined;
    send({ id: request.id, ok: false, code: code ?? `untyped:http2 ${response.status}` });
  } catch (error) {
    send({ id: request.id, ok: false, code: `untyped:${String(error)}` });
  }
}

/** An HTTP request to this node's own routes; a 2xx must carry `v:<key>`, anything else a typed error code. */
async function handleHttp(request: { id: number; key: string; workMs: number; kind: 'slow' | 'post' }) {
  try {
    const response =
      request.kind === 'slow'
        ? await fetch(`${base}/slow/${request.key}?workMs=${request.workMs}`)
        : await fetch(`${base}/order/${request.key}?workMs=${request.workMs}`, {
            method: 'POST',
            // One client's retries, each with a token refreshed since the last (401 → refresh → retry).
            headers: { 'idempotency-key': `"${request.key}"`, authorization: `Bearer client-${request.key}:${randomUUID()}` },
          });
    const body = await response.text();
    if (response.ok) return send({ id: request.id, ok: true, value: body, role: response.headers.get('x-flight-role') });
    const code = response.headers.get('content-type')?.includes('problem+json') ? (JSON.parse(body) as { code?: string }).code : undefined;
    send({ id: request.id, ok: false, code: code ?? `untyped:http ${response.status}` });
  } catch (error) {
    send({ id: request.id, ok: false, code: `untyped:${String(error)}` });
  }
}

type Request = { op: 'request'; id: number; key: string; workMs: number; kind?: 'call' | 'slow' | 'post' | 'h2'; tenant?: string };
type Forget = { op: 'forget'; id: number; key: string };
send({ event: 'ready' });
for await (const line of createInterface({ input: process.stdin })) {
  const message = JSON.parse(line) as Request | Forget | { op: 'exit' };
  if (message.op === 'exit') break;
  if (message.op === 'forget') {
    flight.forget('chaos', message.key).then(
      (found) => send({ id: message.id, forgot: true, found }),
      (error: unknown) => send({ id: message.id, forgot: false, code: error instanceof FlightError ? error.code : String(error) }),
    );
    continue;
  }
  if (message.kind === 'slow' || message.kind === 'post') void handleHttp({ ...message, kind: message.kind });
  else if (message.kind === 'h2') void handleH2({ ...message, tenant: message.tenant ?? 'a.example' });
  else void handle(message);
}
// Input ended (the run is over, or the runner is gone): exit even if closing hangs on an unreachable Redis.
setTimeout(() => process.exit(0), 3000).unref();
server.closeAllConnections();
server.close();
h2Session?.destroy();
h2Server.close();
await flight.close();
await coordinator.close();
await closeLast();
process.exit(0);
