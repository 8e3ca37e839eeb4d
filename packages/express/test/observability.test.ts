/**
 * What an operator sees of a herd, through the official OpenTelemetry SDK: the library's metrics scraped
 * from `/metrics` (the OpenTelemetry Prometheus exporter mounted on the app, as the core README shows)
 * and `flight.role` on each request's server span. Real Express, real Redis, real HTTP.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { context, metrics, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import express from 'express';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSingleFlight, type SingleFlight } from '@flight/core';
import { createIoredisCoordinator } from '@flight/redis-ioredis';
import { createFlightMiddleware } from '../src/index.js';

const spans = new InMemorySpanExporter();
let exporter: PrometheusExporter;
let redis: Redis;
let flights: SingleFlight;
let quiet: SingleFlight;
let server: Server;
let base: string;
let handlerRuns = 0;
/** Opens once the server has received every request of the herd: the one run waits for it. */
let herd: { id: string; size: number; arrived: number; all: Promise<void>; open: () => void } | undefined;

/** The value of every sample of `name` in a Prometheus text exposition, summed over those whose labels include `where`. */
function sample(text: string, name: string, where: Record<string, string> = {}): number {
  let total = 0;
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? ([\d.eE+-]+)/.exec(line);
    if (!match || match[1] !== name) continue;
    const labels = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(where).every(([k, v]) => labels[k] === v)) total += Number(match[3]);
  }
  return total;
}

beforeAll(async () => {
  // The SDK first, as the README says: before the first execute.
  exporter = new PrometheusExporter({ preventServerStart: true });
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [exporter] }));
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }));
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());

  redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  flights = createSingleFlight({
    coordinator: createIoredisCoordinator({ client: redis, prefix: `obs-${randomUUID()}` }),
    stages: { answer: { resultTtlMs: 5_000, l1: { enabled: false } } },
  });
  // The same app's second instance, with telemetry off: it writes nothing to the spans it runs under.
  quiet = createSingleFlight({ telemetry: false, coordinator: createIoredisCoordinator({ client: redis, prefix: `obs-${randomUUID()}` }) });
  const app = express();
  app.get(
    '/quiet/:id',
    createFlightMiddleware({ singleFlight: quiet, stage: 'quiet' }),
    (req, res) => void res.json({ id: req.params.id }),
  );
  app.get('/metrics', (req, res) => exporter.getMetricsRequestHandler(req, res));
  app.get('/answer/:id', createFlightMiddleware({ singleFlight: flights, stage: 'answer' }), async (req, res) => {
    handlerRuns++;
    await herd?.all;
    res.json({ id: req.params.id, text: 'forty-two' });
  });
  // A server span around each request, made active as OpenTelemetry's HTTP instrumentation makes it.
  const tracer = trace.getTracer('test-http-server');
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (herd && req.url === `/answer/${herd.id}` && ++herd.arrived === herd.size) herd.open();
    tracer.startActiveSpan(`${req.method} ${req.url}`, { kind: 1 }, (span) => {
      res.once('close', () => span.end());
      app(req, res);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await flights?.close();
  await quiet?.close();
  redis?.disconnect();
  await exporter?.shutdown();
  metrics.disable();
  trace.disable();
  context.disable();
});

describe('observability of a herd', () => {
  it('300 identical requests: /metrics shows 1 supplier run and 299 calls saved; each server span carries flight.role', async () => {
    const started = performance.now();
    const id = randomUUID();
    let open!: () => void;
    herd = { id, size: 300, arrived: 0, all: new Promise<void>((resolve) => (open = resolve)), open: () => open() };
    const answers = await Promise.all(Array.from({ length: 300 }, () => fetch(`${base}/answer/${id}`)));
    const roles = answers.map((answer) => answer.headers.get('x-flight-role'));
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    expect(handlerRuns).toBe(1);
    expect(roles.filter((role) => role === 'owner')).toHaveLength(1);

    const scrape = await fetch(`${base}/metrics`);
    expect(scrape.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await scrape.text();
    expect(text.split('\n')).toContain('# UNIT flight_execute_duration s');
    expect(sample(text, 'flight_supplier_runs_total', { flight_stage: 'answer' })).toBe(1);
    expect(sample(text, 'flight_upstream_saved_total', { flight_stage: 'answer' })).toBe(299);
    expect(sample(text, 'flight_executions_total', { flight_stage: 'answer', flight_outcome: 'success' })).toBe(300);
    expect(sample(text, 'flight_execute_duration_count', { flight_stage: 'answer' })).toBe(300);
    // Seconds, not milliseconds: the sum of the calls' durations, each one under the whole test's.
    const seconds = sample(text, 'flight_execute_duration_sum', { flight_stage: 'answer' });
    expect(seconds).toBeGreaterThan(0);
    expect(seconds).toBeLessThan((300 * (performance.now() - started)) / 1000);

    const server = spans.getFinishedSpans().filter((span) => span.name === `GET /answer/${id}`);
    expect(server).toHaveLength(300);
    const byRole = new Map<unknown, number>();
    for (const span of server) byRole.set(span.attributes['flight.role'], (byRole.get(span.attributes['flight.role']) ?? 0) + 1);
    expect(byRole.get('owner')).toBe(1);
    // Every other request joined the run, or (reaching the flight after the run was stored) replayed it.
    expect((byRole.get('follower') ?? 0) + (byRole.get('replay') ?? 0)).toBe(299);
    expect(byRole.get('follower')).toBeGreaterThan(0);
  });
});

describe('telemetry: false', () => {
  it('leaves the server span alone: no flight.role, no flight spans', async () => {
    const id = randomUUID();
    const answers = await Promise.all(Array.from({ length: 3 }, () => fetch(`${base}/quiet/${id}`)));
    expect(answers.every((answer) => answer.status === 200 && answer.headers.get('x-flight-role'))).toBe(true);
    const server = spans.getFinishedSpans().filter((span) => span.name === `GET /quiet/${id}`);
    expect(server).toHaveLength(3);
    for (const span of server) expect(span.attributes).not.toHaveProperty('flight.role');
    const flightSpans = spans.getFinishedSpans().filter((span) => span.attributes['flight.stage'] === 'quiet');
    expect(flightSpans).toEqual([]);
  });
});
