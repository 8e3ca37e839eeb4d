/**
 * Hybrid mode with Redis stopped mid-run (a redis-server of this test's own, never the shared one):
 * requests keep succeeding from the local single-flight, counted in /metrics as fallbacks, and the
 * nodes return to distributed mode when Redis is back.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startRedisServer, type Proc } from '../src/cluster.js';
import { burst, countBy, modelStats } from '../src/load.js';
import { ARTIFACTS, metric, resetModel, startCluster, until, type TestCluster } from './helpers.js';

let redis: Proc;
let cluster: TestCluster;

beforeAll(async () => {
  redis = await startRedisServer();
  cluster = await startCluster({ name: 'outage', redisUrl: redis.url, nodes: 3, latencyMs: 200, heartbeatMs: 500 });
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
  await redis?.stop();
});

const mode = async (url: string) => ((await (await fetch(`${url}/healthz`)).json()) as { mode: string }).mode;

it('Redis stopped mid-run → every request still answered (local fallback, in /metrics); back to distributed when Redis returns', async () => {
  const sid = `outage-${Date.now().toString(36)}`;
  const path = `/api/sessions/${sid}/evaluation`;
  const body = (n: number, extra = '') => ({ questionNumber: n, question: 'q', answer: `answer ${n} ${extra}` });

  // 1. Distributed: one model call for the whole cluster.
  expect((await burst(cluster.urls, path, body(1), 60)).every((r) => r.status === 200)).toBe(true);
  expect((await modelStats(cluster.model.url)).calls).toBe(1);
  expect(await Promise.all(cluster.urls.map(mode))).toEqual(['distributed', 'distributed', 'distributed']);

  // 2. Redis dies while a slow burst is in flight (owner running, followers waiting).
  await resetModel(cluster.model);
  const inFlight = burst(cluster.urls, path, body(2, '[latency:1500]'), 60);
  await until('the owner to call the model', async () => (await modelStats(cluster.model.url)).inFlight >= 1);
  await redis.kill('SIGKILL');
  const during = await inFlight;
  expect(countBy(during, (r) => String(r.status))).toEqual({ 200: 60 });

  // 3. While Redis is down: each node deduplicates its own callers.
  await resetModel(cluster.model);
  const down = await burst(cluster.urls, path, body(3), 60);
  expect(countBy(down, (r) => String(r.status))).toEqual({ 200: 60 });
  expect(countBy(down, (r) => r.role ?? '?')).toEqual({ local: 60 });
  expect((await modelStats(cluster.model.url)).calls).toBeLessThanOrEqual(3);
  for (const url of cluster.urls) {
    expect(await metric(url, 'flight_fallbacks_total')).toBeGreaterThan(0);
    expect(await metric(url, 'demo_mode', { mode: 'local-fallback' })).toBe(1);
  }
  const log = readFileSync(join(ARTIFACTS, 'logs', 'outage', 'node-1.log'), 'utf8');
  expect(log).toMatch(/coordination unavailable: serving from the local single-flight/);

  // 4. Redis comes back (empty) on the same port: the nodes reconnect and coordinate again.
  redis = await startRedisServer({ port: redis.port });
  await until(
    'every node back in distributed mode',
    async () => (await Promise.all(cluster.urls.map(mode))).every((m) => m === 'distributed'),
    15_000,
    200,
  );
  await resetModel(cluster.model);
  const back = await burst(cluster.urls, path, body(4), 60);
  expect(countBy(back, (r) => String(r.status))).toEqual({ 200: 60 });
  expect((await modelStats(cluster.model.url)).calls).toBe(1);
  expect(countBy(back, (r) => r.role ?? '?').local).toBeUndefined();
}, 60_000);
