/**
 * The library's metrics (README "Metrics"), recorded by the real OpenTelemetry metrics SDK: SingleFlight
 * instances on one memory coordinator act as the nodes of a cluster.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { metrics } from '@opentelemetry/api';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type HistogramMetricData,
  type MetricData,
} from '@opentelemetry/sdk-metrics';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMemoryCoordinator, createSingleFlight, type SingleFlight, type SingleFlightOptions } from '@flight/core';
import { type FlightCoordinator } from '@flight/core/adapter';
import { createManualClock } from '@flight/core/testing';
import { DURATION_BUCKETS_S, FLIGHT_METRICS } from '../src/telemetry/flight-metrics.js';

let reader: PeriodicExportingMetricReader;
const instances: SingleFlight[] = [];
const FAST = { heartbeatIntervalMs: 500, takeoverAfterMs: 800, pollIntervalMs: 50, guard: { retry: false as const } };

function make(options: SingleFlightOptions): SingleFlight {
  const sf = createSingleFlight({ mode: 'distributed', ...options, defaults: { ...FAST, l1: { enabled: false }, ...options.defaults } });
  instances.push(sf);
  return sf;
}

beforeEach(() => {
  reader = new PeriodicExportingMetricReader({
    exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
    exportIntervalMillis: 3_600_000,
  });
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
});

afterEach(async () => {
  await Promise.all(instances.splice(0).map((sf) => sf.close()));
  metrics.disable();
});

async function collected(name: string): Promise<MetricData | undefined> {
  const { resourceMetrics } = await reader.collect();
  for (const scope of resourceMetrics.scopeMetrics) {
    if (scope.scope.name !== '@flight/core') continue;
    const found = scope.metrics.find((metric) => metric.descriptor.name === name);
    if (found) return found;
  }
  return undefined;
}

/** The sum of a counter's points whose attributes include `where`. */
async function sum(name: string, where: Record<string, string> = {}): Promise<number> {
  const metric = await collected(name);
  let total = 0;
  for (const point of metric?.dataPoints ?? []) {
    if (Object.entries(where).every(([k, v]) => point.attributes[k] === v)) total += point.value as number;
  }
  return total;
}

/** The points of a histogram: attributes, count and sum. */
async function histogram(name: string) {
  const metric = (await collected(name)) as HistogramMetricData | undefined;
  return (metric?.dataPoints ?? []).map((point) => ({ attributes: point.attributes, count: point.value.count, sum: point.value.sum }));
}

describe('metrics through @opentelemetry/api', () => {
  it('a herd across 3 nodes: 1 supplier run, the 29 other callers counted as saved, every call timed in seconds', async () => {
    const coordinator = createMemoryCoordinator();
    const nodes = [0, 1, 2].map((i) => make({ coordinator, nodeId: `n${i}` }));
    const key = randomUUID();
    let runs = 0;
    const supplier = async () => {
      runs++;
      await sleep(150);
      return 'answer';
    };
    const calls = nodes.flatMap((node) => Array.from({ length: 10 }, () => node.execute('chat', key, supplier)));
    const results = await Promise.all(calls);
    expect(runs).toBe(1);
    expect(results.filter((r) => r.role === 'owner')).toHaveLength(1);

    expect(await sum(FLIGHT_METRICS.supplierRuns, { 'flight.stage': 'chat' })).toBe(1);
    expect(await sum(FLIGHT_METRICS.upstreamSaved, { 'flight.stage': 'chat' })).toBe(29);
    expect(await sum(FLIGHT_METRICS.executions, { 'flight.stage': 'chat', 'flight.outcome': 'success' })).toBe(30);
    expect(await sum(FLIGHT_METRICS.executions, { 'flight.role': 'owner' })).toBe(1);

    const durations = await histogram(FLIGHT_METRICS.executeDuration);
    expect(durations.reduce((n, p) => n + p.count, 0)).toBe(30);
    for (const point of durations) {
      expect(point.attributes['flight.stage']).toBe('chat');
      // Seconds, not milliseconds: each call took about the supplier's 150 ms.
      expect(point.sum! / point.count).toBeGreaterThan(0.1);
      expect(point.sum! / point.count).toBeLessThan(5);
    }
    const metric = (await collected(FLIGHT_METRICS.executeDuration)) as HistogramMetricData;
    expect(metric.descriptor.unit).toBe('s');
    expect(metric.dataPoints[0]!.value.buckets.boundaries).toEqual(DURATION_BUCKETS_S);

    // The two other nodes' leaders waited for the owner's node; their in-process joiners did not.
    const waits = await histogram(FLIGHT_METRICS.waitDuration);
    expect(waits.reduce((n, p) => n + p.count, 0)).toBe(2);
    expect(waits.every((p) => ['event', 'poll'].includes(String(p.attributes['flight.wake'])))).toBe(true);
  });

  it('a failed call is timed with its error.type; it saves nothing', async () => {
    const sf = make({ coordinator: createMemoryCoordinator() });
    const failing = Object.assign(new Error('model says no'), { code: 'E_MODEL_REFUSED', status: 400 });
    await expect(sf.execute('chat', randomUUID(), () => Promise.reject(failing))).rejects.toThrow();
    const [point] = await histogram(FLIGHT_METRICS.executeDuration);
    expect(point?.attributes).toMatchObject({ 'flight.stage': 'chat', 'flight.outcome': 'failure', 'error.type': 'E_MODEL_REFUSED' });
    expect(await sum(FLIGHT_METRICS.executions, { 'flight.outcome': 'failure' })).toBe(1);
    expect(await sum(FLIGHT_METRICS.upstreamSaved)).toBe(0);
    expect(await sum(FLIGHT_METRICS.supplierRuns)).toBe(1);
  });

  it('counts L1 hits and replays as saved calls', async () => {
    const coordinator = createMemoryCoordinator();
    const a = make({ coordinator, nodeId: 'a', defaults: { l1: { enabled: true } } });
    const b = make({ coordinator, nodeId: 'b' });
    const key = randomUUID();
    await a.execute('chat', key, async () => 'v');
    expect((await a.execute('chat', key, async () => 'again')).role).toBe('l1');
    expect((await b.execute('chat', key, async () => 'again')).role).toBe('replay');
    expect(await sum(FLIGHT_METRICS.l1Hits, { 'flight.stage': 'chat' })).toBe(1);
    expect(await sum(FLIGHT_METRICS.upstreamSaved, { 'flight.role': 'l1' })).toBe(1);
    expect(await sum(FLIGHT_METRICS.upstreamSaved, { 'flight.role': 'replay' })).toBe(1);
    expect(await sum(FLIGHT_METRICS.supplierRuns)).toBe(1);
  });

  it('counts a takeover of a dead owner', async () => {
    const clock = createManualClock();
    const coordinator = createMemoryCoordinator({ clock });
    const sf = make({ coordinator, nodeId: 'b' });
    const key = randomUUID();
    // An owner that took the flight and died: it never runs, never renews.
    await coordinator.acquire({
      stage: 'chat',
      key,
      takeoverAfterMs: 800,
      leaseTtlMs: 1600,
      maxRunMs: 60_000,
      ownerId: 'ghost',
      ownerToken: 't',
    });
    const call = sf.execute('chat', key, async () => 'rescued');
    await sleep(20);
    await clock.advance(1000);
    expect(await call).toMatchObject({ value: 'rescued', role: 'owner' });
    expect(await sum(FLIGHT_METRICS.takeovers, { 'flight.stage': 'chat' })).toBe(1);
  });

  it('counts calls served in-process when the coordinator fails (hybrid)', async () => {
    const down = new Proxy(createMemoryCoordinator(), {
      get(target, prop, receiver) {
        if (prop === 'acquire') return () => Promise.reject(new Error('ECONNREFUSED'));
        const value = Reflect.get(target, prop, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as FlightCoordinator;
    const sf = make({ coordinator: down, mode: 'hybrid' });
    expect((await sf.execute('chat', randomUUID(), async () => 'local')).value).toBe('local');
    expect(await sum(FLIGHT_METRICS.fallbacks, { 'flight.stage': 'chat' })).toBe(1);
  });

  it("counts the chunks of this node's streamed runs", async () => {
    const sf = make({ coordinator: createMemoryCoordinator() });
    const stream = sf.executeStream('chat', randomUUID(), async function* () {
      yield 'a';
      yield 'b';
      yield 'c';
    });
    const chunks: unknown[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks).toEqual(['a', 'b', 'c']);
    expect(await sum(FLIGHT_METRICS.streamChunks, { 'flight.stage': 'chat' })).toBe(3);
  });

  it('counts stale values as saved calls and failed refreshes by error type', async () => {
    const coordinator = createMemoryCoordinator();
    const stale = { resultTtlMs: 100, stale: { whileRevalidateMs: 10_000, ifErrorMs: 10_000, retryAfterMs: 10_000 } };
    const [a, b] = [make({ coordinator, defaults: stale }), make({ coordinator, defaults: stale })];
    await a.execute('swr', 'k', () => 'v1');
    await sleep(150);
    const broken = () => Promise.reject(Object.assign(new Error('upstream 502'), { status: 502 }));
    expect(await a.execute('swr', 'k', broken)).toMatchObject({ role: 'stale' });
    await sleep(50);
    expect(await b.execute('swr', 'k', broken)).toMatchObject({ role: 'stale' });
    expect(await sum(FLIGHT_METRICS.upstreamSaved, { 'flight.stage': 'swr', 'flight.role': 'stale' })).toBe(2);
    expect(await sum(FLIGHT_METRICS.refreshFailures, { 'flight.stage': 'swr', 'error.type': 'PROVIDER' })).toBe(1);
  });

  it('records nothing with telemetry: false', async () => {
    const sf = make({ coordinator: createMemoryCoordinator(), telemetry: false });
    await sf.execute('chat', randomUUID(), async () => 'v');
    expect(await collected(FLIGHT_METRICS.executions)).toBeUndefined();
    expect(await collected(FLIGHT_METRICS.executeDuration)).toBeUndefined();
  });
});
