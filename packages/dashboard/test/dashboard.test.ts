/**
 * The dashboard over HTTP, on real servers (Express and Fastify) with real single-flights on a real Redis:
 * a herd's savings cluster-wide, the flights in progress read from Redis, durations, degraded and
 * unreachable nodes, read-only by default, and options checked where the dashboard is created.
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import createExpress from 'express';
import { FlightConfigurationError, createSingleFlight } from '@flight/core';
import { freePort, PortTakenError, startRedisServer, type RedisServer } from '@flight/test-servers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createFlightDashboard,
  DashboardCrossSiteError,
  DashboardReadOnlyError,
  type DashboardState,
  type NodeSummary,
} from '../src/index.js';
import { gate, startNode, startPeers, until, type TestNode } from './nodes.js';

const redisUrl = process.env.REDIS_URL!;
const prefix = `dash-${randomUUID().slice(0, 8)}`;
let express: TestNode;
let fastify: TestNode;
let deadPort: number;

const getJson = async <T>(url: string, init?: RequestInit): Promise<{ status: number; body: T; headers: Headers }> => {
  const response = await fetch(url, init);
  return { status: response.status, body: (await response.json()) as T, headers: response.headers };
};

beforeAll(async () => {
  deadPort = await freePort();
  const unreachable = `http://127.0.0.1:${deadPort}/flight`;
  [express, fastify] = (await startPeers(2, ([expressPort, fastifyPort]) => [
    {
      nodeId: 'node-express',
      redisUrl,
      prefix,
      framework: 'express',
      mount: '/flight',
      port: expressPort,
      // The dead peer refuses at once; the live one may answer late on a busy machine and is still live.
      dashboard: { peers: [`http://127.0.0.1:${fastifyPort}/ops/flight`, unreachable], peerTimeoutMs: 10_000 },
    },
    {
      nodeId: 'node-fastify',
      redisUrl,
      prefix,
      framework: 'fastify',
      mount: '/ops/flight',
      port: fastifyPort,
      dashboard: { peers: [`http://127.0.0.1:${expressPort}/flight`], readOnly: false },
    },
  ])) as [TestNode, TestNode];
});

afterAll(async () => {
  await express?.close();
  await fastify?.close();
});

describe('a herd of 300 callers on two nodes', () => {
  const key = `herd-${randomUUID()}`;
  let state: DashboardState;

  it('lists the flight in progress from Redis with its owner, then counts 1 upstream call and 299 saved', async () => {
    const hold = gate();
    let runs = 0;
    const supplier = async () => {
      runs++;
      await hold.promise;
      return { answer: 42 };
    };
    const calls = [
      ...Array.from({ length: 150 }, () => express.flight.execute('answers', key, supplier)),
      ...Array.from({ length: 150 }, () => fastify.flight.execute('answers', key, supplier)),
    ];
    // While the run is held: both dashboards list it from Redis, and the owner's node shows it as its own.
    const listed = await until('the flight in the cluster listing', async () => {
      const { body } = await getJson<DashboardState>(`${fastify.dashboardUrl}/state`);
      return body.flights.shared?.find((f) => f.status === 'RUNNING' || f.status === 'PENDING');
    });
    expect(['node-express', 'node-fastify']).toContain(listed.owner);
    expect(listed.stage).toBe('answers');
    expect(listed.digest).toMatch(/^[\w-]+$/);
    expect(JSON.stringify(listed)).not.toContain('token');
    const ownerNode = listed.owner === 'node-express' ? express : fastify;
    const local = await until('the owner node showing its flight', async () => {
      const { body } = await getJson<DashboardState>(`${ownerNode.dashboardUrl}/state`);
      return body.flights.local.find((f) => f.key === key && f.role === 'owner');
    });
    expect(local.owner).toBe(listed.owner);

    hold.open();
    const results = await Promise.all(calls);
    expect(runs).toBe(1);
    expect(results.every((r) => r.value.answer === 42)).toBe(true);
    state = (await getJson<DashboardState>(`${express.dashboardUrl}/state`)).body;
  });

  it('sums the cluster from every node that answers, the chart included', () => {
    expect(state.cluster.requests).toBe(300);
    expect(state.cluster.runs).toBe(1);
    expect(state.cluster.saved).toBe(299);
    expect(state.cluster.savings).toBeCloseTo(299 / 300, 5);
    const bars = state.cluster.timeline;
    expect(bars.length).toBe(60);
    expect(bars.reduce((sum, b) => sum + b.requests, 0)).toBe(300);
    expect(bars.reduce((sum, b) => sum + b.runs, 0)).toBe(1);
    expect(state.flights.shared?.filter((f) => f.status === 'RUNNING')).toEqual([]);
  });

  it('gives per-stage roles and wait and run durations', () => {
    const [answers] = state.stages;
    expect(answers!.stage).toBe('answers');
    expect(answers!.requests).toBe(150);
    expect((answers!.byRole.owner ?? 0) + (answers!.byRole.follower ?? 0)).toBe(150);
    const held = answers!.byRole.owner ? answers!.run : answers!.wait;
    expect(held?.count).toBeGreaterThan(0);
    expect(held!.p50Ms).toBeGreaterThan(0);
    expect(held!.p99Ms).toBeLessThanOrEqual(held!.maxMs);
  });

  it('shows the unreachable peer as such, and the healthy nodes as healthy', () => {
    const [self, peer, dead] = state.cluster.nodes;
    expect(self).toMatchObject({ self: true, reachable: true, nodeId: 'node-express', degraded: false });
    expect(peer).toMatchObject({ reachable: true, nodeId: 'node-fastify', requests: 150 });
    expect(dead).toMatchObject({ reachable: false, url: `http://127.0.0.1:${deadPort}/flight` });
    expect(state.cluster.degraded).toEqual([`http://127.0.0.1:${deadPort}/flight`]);
  });
});

describe('routes', () => {
  it('serves the page under the mount, with a nonce-only script policy, on both frameworks', async () => {
    for (const url of [express.dashboardUrl, `${express.dashboardUrl}/`, `${fastify.dashboardUrl}/`]) {
      const response = await fetch(url);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      const csp = response.headers.get('content-security-policy')!;
      const nonce = /'nonce-([^']+)'/.exec(csp)![1];
      expect(await response.text()).toContain(`<script nonce="${nonce}">`);
    }
  });

  it('streams the state as server-sent events', async () => {
    const controller = new AbortController();
    const response = await fetch(`${fastify.dashboardUrl}/events`, { signal: controller.signal });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = response.body!.getReader();
    let text = '';
    while (!text.includes('event: state\ndata: ')) text += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    expect(text).toContain('"nodeId":"node-fastify"');
  });

  it('gives peers a node summary only', async () => {
    const { body } = await getJson<NodeSummary>(`${fastify.dashboardUrl}/state?scope=node`);
    expect(body.nodeId).toBe('node-fastify');
    expect(body).not.toHaveProperty('cluster');
  });

  it('passes paths that are not its own to the next Express handler', async () => {
    expect((await fetch(`${express.dashboardUrl}/nope`)).status).toBe(404);
  });

  it('refuses forget when read-only (the default) and forgets cluster-wide when allowed', async () => {
    const key = `forget-${randomUUID()}`;
    await express.flight.execute('answers', key, async () => 'first');
    const post = (url: string, body: unknown) =>
      getJson<{ code?: string; forgotten?: boolean }>(`${url}/forget`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const refused = await post(express.dashboardUrl, { stage: 'answers', key });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe(DashboardReadOnlyError.code);
    expect((await express.flight.execute('answers', key, async () => 'second')).value).toBe('first');

    const forgotten = await post(fastify.dashboardUrl, { stage: 'answers', key });
    expect(forgotten).toMatchObject({ status: 200, body: { forgotten: true } });
    expect((await express.flight.execute('answers', key, async () => 'second')).value).toBe('second');

    const bad = await post(fastify.dashboardUrl, { stage: 'answers' });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('E_FLIGHT_VALIDATION');
  });
});

describe('forget × body parsers in front of the dashboard', () => {
  /** A POST over node:http, so browser headers (`Sec-Fetch-Site`, `Origin`) are sent as given. */
  const post = (url: string, headers: Record<string, string>, body: string) =>
    new Promise<{ status: number; body: { code?: string; forgotten?: boolean } }>((resolve, reject) => {
      const request = httpRequest(url, { method: 'POST', headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
      });
      request.on('error', reject);
      request.end(body);
    });

  it('refuses a cross-site form or JSON whatever parsed the body, and forgets for the same site', async () => {
    const flight = createSingleFlight({ mode: 'local' });
    const dashboard = createFlightDashboard({ singleFlight: flight, readOnly: false });
    const app = createExpress();
    app.use(createExpress.urlencoded({ extended: false }), createExpress.json({ type: '*/*' }));
    app.use('/flight', dashboard.handler);
    const server = createServer(app).listen(0, '127.0.0.1');
    await once(server, 'listening');
    const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    const url = `http://${host}/flight/forget`;
    const json = JSON.stringify({ stage: 'answers', key: 'k' });
    try {
      const form = await post(
        url,
        { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'cross-site' },
        'stage=answers&key=k',
      );
      expect(form).toMatchObject({ status: 403, body: { code: DashboardCrossSiteError.code } });
      // Parsed as JSON by `express.json({ type: '*/*' })`, but not sent as JSON: refused all the same.
      expect((await post(url, { 'content-type': 'text/plain' }, json)).status).toBe(400);
      const fromElsewhere = await post(url, { 'content-type': 'application/json', origin: 'https://evil.example' }, json);
      expect(fromElsewhere).toMatchObject({ status: 403, body: { code: DashboardCrossSiteError.code } });
      expect((await post(url, { 'content-type': 'application/json', 'sec-fetch-site': 'same-site' }, json)).status).toBe(403);
      const sameSite = await post(
        url,
        { 'content-type': 'application/json', 'sec-fetch-site': 'same-origin', origin: `http://${host}` },
        json,
      );
      expect(sameSite).toMatchObject({ status: 200, body: { forgotten: false } });
      expect((await post(url, { 'content-type': 'application/json' }, json)).status).toBe(200);
    } finally {
      dashboard.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await flight.close();
    }
  });
});

describe('a degraded node', () => {
  let redis: RedisServer | undefined;
  afterAll(() => redis?.stop());

  it('reports hybrid fallback while its Redis is down, to itself and to its peers', async () => {
    redis = await startRedisServer();
    const node = await startNode({
      nodeId: 'node-hybrid',
      redisUrl: redis.url,
      prefix,
      framework: 'express',
      mount: '/flight',
      mode: 'hybrid',
    });
    try {
      await node.flight.execute('answers', 'before', async () => 1);
      expect(node.dashboard!.node().degraded).toBe(false);
      await redis.stop();
      const result = await node.flight.execute('answers', 'during', async () => 2);
      expect(result.role).toBe('local');
      const own = await node.dashboard!.state();
      expect(own.node.degraded).toBe(true);
      expect(own.cluster.degraded).toEqual(['node-hybrid']);
      expect(own.events.some((e) => e.type === 'fallback' && e.key === 'during')).toBe(true);
      expect(own.stages[0]!.fallbacks).toBeGreaterThan(0);
      expect(own.flights.sharedError).toBeTruthy();

      // A peer that answers late on a busy machine is still this test's peer: only one that never answers is not.
      const watcher = createFlightDashboard({ singleFlight: express.flight, peers: [node.dashboardUrl], peerTimeoutMs: 10_000 });
      try {
        const seen = await watcher.state();
        expect(seen.cluster.nodes[1]).toMatchObject({ nodeId: 'node-hybrid', degraded: true, mode: 'hybrid' });
        expect(seen.cluster.degraded).toEqual(['node-hybrid']);
      } finally {
        watcher.close();
      }
    } finally {
      await node.close();
    }
  });
});

describe('peers behind authentication', () => {
  it('asks them with the headers or the fetch it is given; without, a peer that refuses is unreachable (HTTP 401)', async () => {
    const peerFlight = createSingleFlight({ nodeId: 'node-guarded', mode: 'local' });
    const peer = createFlightDashboard({ singleFlight: peerFlight });
    const server = createServer((req, res) => {
      if (req.headers.authorization === 'Bearer s3cret') return peer.handler(req, res);
      res.statusCode = 401;
      res.end();
    }).listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const asked: string[] = [];
    const watchers = {
      none: createFlightDashboard({ singleFlight: express.flight, peers: [url] }),
      object: createFlightDashboard({ singleFlight: express.flight, peers: [url], peerHeaders: { authorization: 'Bearer s3cret' } }),
      function: createFlightDashboard({
        singleFlight: express.flight,
        peers: [url],
        peerHeaders: async (peerUrl) => (asked.push(peerUrl), { authorization: 'Bearer s3cret' }),
      }),
      fetch: createFlightDashboard({
        singleFlight: express.flight,
        peers: [url],
        peerFetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as object), authorization: 'Bearer s3cret' } }),
      }),
    };
    try {
      expect((await watchers.none.state()).cluster.nodes[1]).toMatchObject({ reachable: false, error: 'HTTP 401' });
      for (const watcher of [watchers.object, watchers.function, watchers.fetch])
        expect((await watcher.state()).cluster.nodes[1]).toMatchObject({ reachable: true, nodeId: 'node-guarded' });
      expect(asked).toEqual([url]);
    } finally {
      Object.values(watchers).forEach((w) => w.close());
      peer.close();
      await new Promise((resolve) => server.close(resolve));
      await peerFlight.close();
    }
  });
});

describe('options', () => {
  const singleFlight = createSingleFlight({ nodeId: 'n', mode: 'local' });

  it('rejects a typo, a missing single-flight, a bad peer or number, naming the option', () => {
    const cases: Array<[unknown, string]> = [
      [{ singleFlight, readonly: false }, 'did you mean "readOnly"'],
      [{}, 'singleFlight'],
      [{ singleFlight, peers: ['10.0.0.7:3000'] }, 'peers'],
      [{ singleFlight, buckets: 1 }, 'buckets'],
      [{ singleFlight, inspector: {} }, 'inspector'],
      [{ singleFlight, peerHeaders: { authorization: 1 } }, 'peerHeaders'],
      [{ singleFlight, peerFetch: 'fetch' }, 'peerFetch'],
    ];
    for (const [options, message] of cases) {
      expect(() => createFlightDashboard(options as never)).toThrow(FlightConfigurationError);
      expect(() => createFlightDashboard(options as never)).toThrow(message);
    }
  });

  it('stops listening to the single-flight when closed', async () => {
    const dashboard = createFlightDashboard({ singleFlight });
    await singleFlight.execute('s', 'k1', async () => 1);
    dashboard.close();
    await singleFlight.execute('s', 'k2', async () => 1);
    expect((await dashboard.state()).cluster.requests).toBe(1);
  });
});

describe('test nodes on ports another process may take', () => {
  it('a node whose port was taken fails with PortTakenError and leaves nothing open; startPeers then starts on fresh ports', async () => {
    const taken = Number(new URL(express.dashboardUrl).port);
    const started = startNode({ nodeId: 'late', redisUrl, prefix, framework: 'fastify', mount: '/flight', port: taken });
    await expect(started).rejects.toBeInstanceOf(PortTakenError);
    let asked = 0;
    const [node] = await startPeers(1, ([port]) => [
      { nodeId: 'again', redisUrl, prefix, framework: 'express', mount: '/flight', port: asked++ === 0 ? taken : port },
    ]);
    try {
      expect(asked).toBe(2);
      expect((await getJson<DashboardState>(`${node!.dashboardUrl}/state`)).body.node.nodeId).toBe('again');
    } finally {
      await node!.close();
    }
  });
});
