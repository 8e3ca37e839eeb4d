/**
 * What a wrapped client reports through OpenTelemetry: a GenAI CLIENT span per call with usage and the
 * caller's role, tokens spent once (`gen_ai.client.token.usage`, by the owner), tokens and calls saved by
 * every other caller — for answers and for streams.
 */
import { randomUUID } from 'node:crypto';
import { context, metrics, trace, SpanKind } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createMemoryCoordinator, createSingleFlight, type SingleFlight } from '@flight/core';
import { startFakeModel, type FakeModel } from '@flight/fake-model';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OPENAI_METRICS, withFlights } from '../src/index.js';

const spans = new InMemorySpanExporter();
let reader: PeriodicExportingMetricReader;
let model: FakeModel;
const flights: SingleFlight[] = [];
let clients: OpenAI[];

beforeAll(async () => {
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }));
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  reader = new PeriodicExportingMetricReader({
    exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
    exportIntervalMillis: 60_000,
  });
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
  model = await startFakeModel({ port: 0, latencyMs: 5, tokensPerSecond: 500 });
  const coordinator = createMemoryCoordinator();
  clients = ['a', 'b'].map((nodeId) => {
    const flight = createSingleFlight({ coordinator, mode: 'distributed', nodeId, defaults: { l1: { enabled: false } } });
    flights.push(flight);
    return withFlights(new OpenAI({ baseURL: `${model.url}/v1`, apiKey: 'sk-test', maxRetries: 0 }), { flights: flight, stage: 'llm' });
  });
});
afterAll(async () => {
  await Promise.all(flights.map((f) => f.close()));
  await model?.close();
  trace.disable();
  context.disable();
  metrics.disable();
});
beforeEach(() => spans.reset());

/** A metric's data points (cumulative), by name. */
async function points(name: string) {
  const { resourceMetrics } = await reader.collect();
  const found = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === name);
  return (found?.dataPoints ?? []) as { attributes: Record<string, unknown>; value: number | { sum: number; count: number } }[];
}
const total = (list: Awaited<ReturnType<typeof points>>, match: Record<string, unknown>) =>
  list
    .filter((p) => Object.entries(match).every(([k, v]) => p.attributes[k] === v))
    .reduce((sum, p) => sum + (typeof p.value === 'number' ? p.value : p.value.sum), 0);

describe('GenAI telemetry', () => {
  it('10 identical calls on 2 nodes: 10 CLIENT spans with usage and role; tokens spent once, saved 9 times', async () => {
    const body = { model: 'fake-model', messages: [{ role: 'user' as const, content: `[latency:100] ${randomUUID()}` }], temperature: 0 };
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => clients[i % 2]!.chat.completions.create(body)));
    const { prompt_tokens: input, completion_tokens: output } = results[0]!.usage!;
    const calls = spans.getFinishedSpans().filter((s) => s.name === 'chat fake-model');
    expect(calls).toHaveLength(10);
    for (const span of calls) {
      expect(span.kind).toBe(SpanKind.CLIENT);
      expect(span.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'fake-model',
        'gen_ai.request.temperature': 0,
        'gen_ai.response.model': 'fake-model',
        'gen_ai.usage.input_tokens': input,
        'gen_ai.usage.output_tokens': output,
      });
    }
    expect(calls.filter((s) => s.attributes['flight.role'] === 'owner')).toHaveLength(1);
    // The flight's own span runs inside the call's span.
    const executes = spans.getFinishedSpans().filter((s) => s.name === 'flight.execute');
    expect(executes.every((e) => calls.some((c) => c.spanContext().spanId === e.parentSpanContext?.spanId))).toBe(true);

    const spent = await points(OPENAI_METRICS.tokenUsage);
    expect(total(spent, { 'gen_ai.token.type': 'input', 'flight.stage': 'llm' })).toBe(input);
    expect(total(spent, { 'gen_ai.token.type': 'output', 'flight.stage': 'llm' })).toBe(output);
    const saved = await points(OPENAI_METRICS.tokensSaved);
    expect(total(saved, { 'gen_ai.token.type': 'input', 'gen_ai.request.model': 'fake-model' })).toBe(9 * input);
    expect(total(saved, { 'gen_ai.token.type': 'output' })).toBe(9 * output);
    const counted = await points(OPENAI_METRICS.calls);
    expect(total(counted, { 'flight.role': 'owner' })).toBe(1);
    expect(total(counted, { 'flight.role': 'follower' })).toBe(9);
  });

  it('a streamed call reports the usage of its last chunk; an unshared call is counted as such', async () => {
    const before = total(await points(OPENAI_METRICS.tokensSaved), { 'gen_ai.token.type': 'output' });
    const body = {
      model: 'fake-model',
      messages: [{ role: 'user' as const, content: `[format:text] [latency:100] ${randomUUID()}` }],
      temperature: 0,
      stream: true as const,
      stream_options: { include_usage: true },
    };
    const streams = await Promise.all(Array.from({ length: 4 }, (_, i) => clients[i % 2]!.chat.completions.create(body)));
    let usage: OpenAI.CompletionUsage | undefined;
    for (const stream of streams) for await (const chunk of stream) usage = chunk.usage ?? usage;
    const calls = spans.getFinishedSpans().filter((s) => s.name === 'chat fake-model');
    expect(calls).toHaveLength(4);
    for (const span of calls) expect(span.attributes['gen_ai.usage.output_tokens']).toBe(usage!.completion_tokens);
    expect(total(await points(OPENAI_METRICS.tokensSaved), { 'gen_ai.token.type': 'output' }) - before).toBe(3 * usage!.completion_tokens);

    await clients[0]!.chat.completions.create({ model: 'fake-model', messages: [{ role: 'user', content: 'sampled [latency:5]' }] });
    expect(total(await points(OPENAI_METRICS.calls), { 'flight.role': 'unshared' })).toBe(1);
  });
});
