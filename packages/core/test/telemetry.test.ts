/**
 * `execute` as OpenTelemetry spans and counts, recorded by the real SDK (in-memory exporter): two
 * SingleFlight instances on one memory coordinator act as two nodes.
 */
import { randomUUID } from 'node:crypto';
import { context, metrics, trace, SpanStatusCode } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMemoryCoordinator, createSingleFlight, FlightExecutionError, type SingleFlight } from '@flight/core';
import { silentLogger } from '@flight/core/adapter';
import { FlightTelemetry } from '../src/telemetry/flight-telemetry.js';
import { loadOtelApi } from '../src/telemetry/otel-api.js';
import { formatTraceparent, parseTraceparent } from '../src/telemetry/traceparent.js';
import { figure } from './helpers.js';

const exporter = new InMemorySpanExporter();
let reader: PeriodicExportingMetricReader;
let contextManager: AsyncLocalStorageContextManager;
const instances: SingleFlight[] = [];

function registerSdk() {
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
  contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  reader = new PeriodicExportingMetricReader({
    exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
    exportIntervalMillis: 3_600_000,
  });
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
}

function unregisterSdk() {
  trace.disable();
  context.disable();
  metrics.disable();
  exporter.reset();
}

/** Two "nodes": SingleFlight instances sharing one coordinator, as two processes share Redis. */
function nodes(count: number, options: { telemetry?: boolean } = {}) {
  const coordinator = createMemoryCoordinator();
  const list = Array.from({ length: count }, (_, i) =>
    createSingleFlight({ coordinator, mode: 'distributed', nodeId: `node-${i}`, defaults: { l1: { enabled: false } }, ...options }),
  );
  instances.push(...list);
  return { coordinator, nodes: list };
}

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

const executeSpans = () => exporter.getFinishedSpans().filter((s) => s.name === 'flight.execute');
const byRole = (role: string) => executeSpans().filter((s) => s.attributes['flight.role'] === role);
const linkedSpanIds = (span: ReadableSpan) => span.links.map((link) => link.context.spanId);

async function counts(): Promise<Record<string, number>> {
  const { resourceMetrics } = await reader.collect();
  const out: Record<string, number> = {};
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics) {
      if (metric.descriptor.name !== 'flight.executions') continue;
      for (const point of metric.dataPoints) {
        const a = point.attributes;
        out[`${a['flight.stage']}/${a['flight.role']}/${a['flight.outcome']}`] = point.value as number;
      }
    }
  }
  return out;
}

afterEach(async () => {
  await Promise.all(instances.splice(0).map((sf) => sf.close()));
  unregisterSdk();
});

describe('tracing with an SDK registered', () => {
  beforeEach(registerSdk);

  it('records the owner span and links every follower span (another node, same node, later replay) to it', async () => {
    const {
      coordinator,
      nodes: [a, b, c],
    } = nodes(3);
    const key = `k-${randomUUID()}`;
    const release = gate();
    const started = gate();
    const owner = a!.execute('report', key, async () => {
      started.open();
      await release.opened;
      return { rows: 3 };
    });
    await started.opened;
    // The owner's span context is stored with the flight while it runs.
    const stored = await coordinator.readMeta({ stage: 'report', key });
    const followerB1 = b!.execute('report', key, async () => ({ rows: -1 }));
    const followerB2 = b!.execute('report', key, async () => ({ rows: -1 }));
    release.open();
    const results = await Promise.all([owner, followerB1, followerB2]);
    expect(results.map((r) => r.role)).toEqual(['owner', 'follower', 'follower']);
    const replay = await c!.execute('report', key, async () => ({ rows: -1 }));
    expect(replay.role).toBe('replay');

    const [ownerSpan] = byRole('owner');
    expect(ownerSpan).toBeDefined();
    const ownerContext = ownerSpan!.spanContext();
    expect(stored?.traceparent).toBe(formatTraceparent(ownerContext));
    expect(ownerSpan!.kind).toBe(0); // INTERNAL
    expect(ownerSpan!.attributes).toMatchObject({
      'flight.stage': 'report',
      'flight.role': 'owner',
      'flight.epoch': results[0].epoch,
      'flight.outcome': 'success',
      'flight.shared': false,
    });
    expect(ownerSpan!.links).toEqual([]);

    const followers = byRole('follower');
    expect(followers).toHaveLength(2);
    for (const span of [...followers, ...byRole('replay')]) {
      expect(linkedSpanIds(span)).toEqual([ownerContext.spanId]);
      expect(span.links[0]!.context.traceId).toBe(ownerContext.traceId);
      expect(span.spanContext().traceId).not.toBe(ownerContext.traceId);
      expect(span.attributes['flight.epoch']).toBe(results[0].epoch);
      expect(span.attributes['flight.outcome']).toBe('success');
    }
    for (const span of followers) expect(typeof span.attributes['flight.waited_ms']).toBe('number');
    expect(byRole('replay')).toHaveLength(1);
    expect(await counts()).toEqual({ 'report/owner/success': 1, 'report/follower/success': 2, 'report/replay/success': 1 });
  });

  it('records a failure with status ERROR and error.type on the owner, and on the follower that gets it replayed', async () => {
    const {
      nodes: [a, b],
    } = nodes(2);
    const key = `k-${randomUUID()}`;
    const release = gate();
    const started = gate();
    const bad = Object.assign(new Error('bad input'), { code: 'E_BAD_INPUT', retryable: false });
    const owner = a!.execute('score', key, async () => {
      started.open();
      await release.opened;
      throw bad;
    });
    await started.opened;
    const follower = b!.execute('score', key, async () => 1);
    release.open();
    const settled = await Promise.allSettled([owner, follower]);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
    const errors = settled.map((s) => (s as PromiseRejectedResult).reason as FlightExecutionError);

    const [ownerSpan] = byRole('owner');
    const [followerSpan] = byRole('follower');
    expect(ownerSpan!.status.code).toBe(SpanStatusCode.ERROR);
    expect(ownerSpan!.attributes['flight.outcome']).toBe('failure');
    // The specific code the failure carries (what the supplier threw), not the wrapper's E_FLIGHT_EXECUTION.
    expect(errors.map((e) => [e.code, e.errorCode])).toEqual([
      ['E_FLIGHT_EXECUTION', 'E_BAD_INPUT'],
      ['E_FLIGHT_EXECUTION', 'E_BAD_INPUT'],
    ]);
    expect(ownerSpan!.attributes['error.type']).toBe('E_BAD_INPUT');
    expect(ownerSpan!.events.map((e) => e.name)).toContain('exception');
    expect(followerSpan!.status.code).toBe(SpanStatusCode.ERROR);
    expect(followerSpan!.attributes['error.type']).toBe('E_BAD_INPUT');
    expect(linkedSpanIds(followerSpan!)).toEqual([ownerSpan!.spanContext().spanId]);
    const counted = await counts();
    expect(counted['score/owner/failure']).toBe(1);
    expect(counted['score/follower/failure']).toBe(1);
  });

  it('makes spans started by the supplier children of the owner span', async () => {
    const {
      nodes: [a],
    } = nodes(1);
    await a!.execute('fetch', `k-${randomUUID()}`, async () => {
      trace.getTracer('app').startSpan('upstream call').end();
      return 1;
    });
    const upstream = exporter.getFinishedSpans().find((s) => s.name === 'upstream call');
    const [ownerSpan] = byRole('owner');
    expect(upstream?.parentSpanContext?.spanId).toBe(ownerSpan!.spanContext().spanId);
    expect(upstream?.spanContext().traceId).toBe(ownerSpan!.spanContext().traceId);
  });

  it('links the callers that joined a local-mode run on one node to the span that ran it', async () => {
    const sf = createSingleFlight({ mode: 'local' });
    instances.push(sf);
    const release = gate();
    const key = `k-${randomUUID()}`;
    const calls = [sf.execute('local', key, () => release.opened.then(() => 1)), sf.execute('local', key, async () => 2)];
    release.open();
    // Both report the role `local` (no coordinator); the one that joined links to the one that ran.
    expect((await Promise.all(calls)).map((r) => [r.role, r.value])).toEqual([
      ['local', 1],
      ['local', 1],
    ]);
    const spans = byRole('local');
    const runner = spans.find((s) => s.links.length === 0);
    const joiner = spans.find((s) => s.links.length === 1);
    expect(linkedSpanIds(joiner!)).toEqual([runner!.spanContext().spanId]);
    expect(joiner!.attributes['flight.shared']).toBe(true);
  });

  it('reports nothing with telemetry: false', async () => {
    const {
      coordinator,
      nodes: [a],
    } = nodes(1, { telemetry: false });
    const key = `k-${randomUUID()}`;
    await a!.execute('quiet', key, async () => 1);
    expect(exporter.getFinishedSpans()).toEqual([]);
    expect(await counts()).toEqual({});
    // A flight started without a span stores no traceparent.
    expect((await coordinator.readMeta({ stage: 'quiet', key }))?.traceparent).toBeUndefined();
  });

  it('measures the cost of a recorded execute against telemetry: false (figure only)', async () => {
    const {
      nodes: [traced],
    } = nodes(1);
    const {
      nodes: [quiet],
    } = nodes(1, { telemetry: false });
    const runs = 2000;
    const usPerCall = async (sf: SingleFlight, prefix: string) => {
      const started = performance.now();
      for (let i = 0; i < runs; i++) await sf.execute('cost', `${prefix}-${i}`, async () => i);
      return Math.round(((performance.now() - started) * 1000) / runs);
    };
    // Warm both first: the context manager's promise hooks switch on at the first traced call and slow
    // every later call, traced or not; then alternate and keep the best of each.
    await usPerCall(traced!, 'warm-on');
    await usPerCall(quiet!, 'warm-off');
    const off: number[] = [];
    const recorded: number[] = [];
    for (const round of [1, 2]) {
      off.push(await usPerCall(quiet!, `off-${round}`));
      recorded.push(await usPerCall(traced!, `on-${round}`));
    }
    expect(byRole('owner')).toHaveLength(3 * runs);
    figure('telemetry-recorded-execute', {
      runs,
      mode: 'distributed, memory coordinator',
      usPerCallOff: Math.min(...off),
      usPerCallRecorded: Math.min(...recorded),
    });
  });
});

describe('with a span processor that throws', () => {
  it('still serves every caller and logs the telemetry error', async () => {
    const throwing = {
      onStart() {
        throw new Error('processor onStart broke');
      },
      onEnd() {
        throw new Error('processor onEnd broke');
      },
      forceFlush: async () => {},
      shutdown: async () => {},
    };
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [throwing] }));
    const warnings: string[] = [];
    const logger = { ...silentLogger, warn: (_fields: object, message: string) => void warnings.push(message) };
    const coordinator = createMemoryCoordinator();
    const [a, b] = [0, 1].map((i) => createSingleFlight({ coordinator, mode: 'distributed', nodeId: `n${i}`, logger }));
    instances.push(a!, b!);
    const key = `k-${randomUUID()}`;
    const release = gate();
    const calls = [a!.execute('broken', key, () => release.opened.then(() => 'v')), b!.execute('broken', key, async () => 'w')];
    release.open();
    expect((await Promise.all(calls)).map((r) => [r.role, r.value])).toEqual([
      ['owner', 'v'],
      ['follower', 'v'],
    ]);
    expect(warnings.some((m) => m.includes('flight.execute span'))).toBe(true);
  });
});

describe('without an SDK', () => {
  it('runs owner and follower paths with no error, no spans and no stored traceparent', async () => {
    const {
      coordinator,
      nodes: [a, b],
    } = nodes(2);
    const key = `k-${randomUUID()}`;
    const release = gate();
    const owner = a!.execute('plain', key, () => release.opened.then(() => 'v'));
    const follower = b!.execute('plain', key, async () => 'w');
    await Promise.resolve();
    expect((await coordinator.readMeta({ stage: 'plain', key }))?.traceparent).toBeUndefined();
    release.open();
    expect((await Promise.all([owner, follower])).map((r) => [r.role, r.value])).toEqual([
      ['owner', 'v'],
      ['follower', 'v'],
    ]);
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it('reports nothing when @opentelemetry/api is not installed', () => {
    const missing = (id: string) => {
      throw Object.assign(new Error(`Cannot find module '${id}'`), { code: 'MODULE_NOT_FOUND' });
    };
    expect(loadOtelApi(missing).api).toBeUndefined();
    expect(FlightTelemetry.create(true, silentLogger, missing)).toBeUndefined();
    expect(FlightTelemetry.create(false, silentLogger)).toBeUndefined();
    expect(loadOtelApi().api).toBeDefined();
  });
});

describe('traceparent', () => {
  it('formats and parses W3C traceparent strings, rejecting malformed ones', () => {
    const parts = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1 };
    const value = formatTraceparent(parts);
    expect(value).toBe('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
    expect(parseTraceparent(value)).toEqual(parts);
    expect(parseTraceparent('01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00-extra')).toEqual({ ...parts, traceFlags: 0 });
    for (const bad of [
      undefined,
      42,
      '',
      'ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      '00-00000000000000000000000000000000-b7ad6b7169203331-01',
      '00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01',
      '00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01',
      '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra',
    ]) {
      expect(parseTraceparent(bad)).toBeUndefined();
    }
  });
});
