/**
 * The middleware on two SingleFlights over a real Redis (two nodes in one process) with the AI SDK's mock
 * model: what crosses Redis comes back as the SDK's types, usage saved is counted, a cut stream is never
 * kept, options are checked.
 */
import { randomUUID } from 'node:crypto';
import type { LanguageModelV4GenerateResult, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { metrics } from '@opentelemetry/api';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { createSingleFlight, FlightConfigurationError, FlightValidationError, type SingleFlight } from '@flight/core';
import { createIoredisCoordinator } from '@flight/redis-ioredis';
import { deleteKeys, sharedRedisUrl } from '@flight/test-servers';
import { generateText, simulateReadableStream, streamText, wrapLanguageModel } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AI_SDK_METRICS, FlightAiSdkStreamCutError, flightMiddleware, flightOf } from '../src/index.js';

const prefix = `flight-ai-mw-${randomUUID().slice(0, 8)}`;
let reader: PeriodicExportingMetricReader;
let nodes: SingleFlight[] = [];

beforeAll(async () => {
  reader = new PeriodicExportingMetricReader({
    exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
    exportIntervalMillis: 60_000,
  });
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
  nodes = ['a', 'b'].map((nodeId) =>
    createSingleFlight({
      coordinator: createIoredisCoordinator({ redis: sharedRedisUrl(), prefix }),
      nodeId,
      defaults: { l1: { enabled: false } },
    }),
  );
});
afterAll(async () => {
  await Promise.all(nodes.map((n) => n.close()));
  await deleteKeys(sharedRedisUrl(), `${prefix}*`);
});

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };

/** A gate the mock model's calls wait on, so every caller joins the one call. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

async function metricSum(name: string, attributes: Record<string, string>): Promise<number> {
  const { resourceMetrics } = await reader.collect();
  let sum = 0;
  for (const scope of resourceMetrics.scopeMetrics)
    for (const metric of scope.metrics)
      if (metric.descriptor.name === name)
        for (const point of metric.dataPoints)
          if (Object.entries(attributes).every(([k, v]) => point.attributes[k] === v)) sum += point.value as number;
  return sum;
}

describe('flightMiddleware', () => {
  it("generateText: one call for both nodes; the response's Date, a file's bytes and the usage come back as they were; tokens saved counted", async () => {
    const held = gate();
    const timestamp = new Date('2026-01-02T03:04:05.678Z');
    const answer: LanguageModelV4GenerateResult = {
      content: [
        { type: 'text', text: 'the answer' },
        { type: 'file', mediaType: 'image/png', data: { type: 'data', data: new Uint8Array([1, 2, 3, 250]) } },
      ],
      finishReason: { unified: 'stop', raw: 'stop' },
      usage,
      warnings: [],
      response: { id: 'r1', timestamp, modelId: 'mock-model' },
    } as LanguageModelV4GenerateResult;
    const mock = new MockLanguageModelV4({
      modelId: `mock-${randomUUID()}`,
      doGenerate: async () => {
        await held.opened;
        return answer;
      },
    });
    const models = nodes.map((flights) => wrapLanguageModel({ model: mock, middleware: flightMiddleware({ flights }) }));
    const calls = models.flatMap((model) => Array.from({ length: 5 }, () => generateText({ model, prompt: 'hi', temperature: 0 })));
    await new Promise((resolve) => setTimeout(resolve, 0));
    held.open();
    const results = await Promise.all(calls);
    expect(mock.doGenerateCalls).toHaveLength(1);
    const roles = results.map((r) => flightOf(r.providerMetadata)!.role);
    expect(roles.filter((r) => r === 'owner')).toHaveLength(1);
    for (const result of results) {
      expect(result.text).toBe('the answer');
      expect(result.response.timestamp).toBeInstanceOf(Date);
      expect(result.response.timestamp.getTime()).toBe(timestamp.getTime());
      expect(result.files[0]!.uint8Array).toEqual(new Uint8Array([1, 2, 3, 250]));
      expect(result.usage.inputTokens).toBe(10);
    }
    const model = { 'gen_ai.request.model': mock.modelId };
    expect(await metricSum(AI_SDK_METRICS.tokensSpent, { ...model, 'gen_ai.token.type': 'input' })).toBe(10);
    expect(await metricSum(AI_SDK_METRICS.tokensSaved, { ...model, 'gen_ai.token.type': 'input' })).toBe(90);
    expect(await metricSum(AI_SDK_METRICS.tokensSaved, { ...model, 'gen_ai.token.type': 'output' })).toBe(45);
    expect(await metricSum(AI_SDK_METRICS.calls, { ...model, 'flight.role': 'owner' })).toBe(1);
    expect(await metricSum(AI_SDK_METRICS.calls, model)).toBe(10);
  });

  it('streamText: a stream that ends without its finish part ends with an error part and is not kept: the next call, on any node, runs again', async () => {
    const parts: LanguageModelV4StreamPart[] = [
      { type: 'stream-start', warnings: [] },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'half an ans' },
    ];
    const mock = new MockLanguageModelV4({
      modelId: `mock-${randomUUID()}`,
      doStream: async () => ({ stream: simulateReadableStream({ chunks: parts, chunkDelayInMs: 5 }) }),
    });
    const [a, b] = nodes.map((flights) => wrapLanguageModel({ model: mock, middleware: flightMiddleware({ flights }) }));
    const read = async (model: typeof a) => {
      const errors: unknown[] = [];
      const result = streamText({ model: model!, prompt: 'hi', temperature: 0, onError: ({ error }) => void errors.push(error) });
      let text = '';
      for await (const delta of result.textStream) text += delta;
      return { text, errors };
    };
    const first = await read(a);
    expect(first.text).toBe('half an ans');
    expect(first.errors[0]).toBeInstanceOf(FlightAiSdkStreamCutError);
    expect(mock.doStreamCalls).toHaveLength(1);
    // On the other node: not replayed (a cut answer is a provider failure, for the next caller to run again).
    const second = await read(b);
    expect(second.errors[0]).toBeInstanceOf(FlightAiSdkStreamCutError);
    expect(mock.doStreamCalls).toHaveLength(2);
  });

  it('streamText: the finish part carries the usage and this caller’s flight info', async () => {
    const parts: LanguageModelV4StreamPart[] = [
      { type: 'stream-start', warnings: [] },
      { type: 'response-metadata', id: 'r2', timestamp: new Date('2026-02-03T00:00:00Z'), modelId: 'mock' },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'whole ' },
      { type: 'text-delta', id: 't', delta: 'answer' },
      { type: 'text-end', id: 't' },
      { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage },
    ];
    const mock = new MockLanguageModelV4({
      modelId: `mock-${randomUUID()}`,
      doStream: async () => ({ stream: simulateReadableStream({ chunks: parts, chunkDelayInMs: 10 }) }),
    });
    const models = nodes.map((flights) => wrapLanguageModel({ model: mock, middleware: flightMiddleware({ flights }) }));
    const results = await Promise.all(
      models.flatMap((model) =>
        Array.from({ length: 3 }, async () => {
          const result = streamText({ model, prompt: 'hi', temperature: 0 });
          return {
            text: await result.text,
            usage: await result.usage,
            flight: flightOf(await result.providerMetadata),
            response: await result.response,
          };
        }),
      ),
    );
    expect(mock.doStreamCalls).toHaveLength(1);
    for (const result of results) {
      expect(result.text).toBe('whole answer');
      expect(result.usage.outputTokens).toBe(5);
      expect(result.response.timestamp.toISOString()).toBe('2026-02-03T00:00:00.000Z');
    }
    expect(results.filter((r) => r.flight?.role === 'owner')).toHaveLength(1);
    expect(results.filter((r) => r.flight?.shared)).toHaveLength(5);
  });

  it('streamText: a caller that joins after parts were streamed gets them first, then the rest live, of the one call', async () => {
    const released = gate();
    const mock = new MockLanguageModelV4({
      modelId: `mock-${randomUUID()}`,
      doStream: async () => ({
        stream: new ReadableStream<LanguageModelV4StreamPart>({
          async start(sink) {
            sink.enqueue({ type: 'stream-start', warnings: [] });
            sink.enqueue({ type: 'text-start', id: 't' });
            sink.enqueue({ type: 'text-delta', id: 't', delta: 'first half, ' });
            await released.opened;
            sink.enqueue({ type: 'text-delta', id: 't', delta: 'second half' });
            sink.enqueue({ type: 'text-end', id: 't' });
            sink.enqueue({ type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage });
            sink.close();
          },
        }),
      }),
    });
    const [a, b] = nodes.map((flights) => wrapLanguageModel({ model: mock, middleware: flightMiddleware({ flights }) }));
    const early = streamText({ model: a!, prompt: 'hi', temperature: 0 });
    const earlyText = early.textStream[Symbol.asyncIterator]();
    expect((await earlyText.next()).value).toBe('first half, ');
    // The first half was streamed: a caller on the other node joins now.
    const late = streamText({ model: b!, prompt: 'hi', temperature: 0 });
    const lateText = late.textStream[Symbol.asyncIterator]();
    expect((await lateText.next()).value).toBe('first half, ');
    released.open();
    expect(await late.text).toBe('first half, second half');
    expect(await early.text).toBe('first half, second half');
    expect(mock.doStreamCalls).toHaveLength(1);
    expect(flightOf(await late.providerMetadata)?.role).toBe('follower');
  });

  it("cancelAbandoned: a call whose every caller left is cancelled (the model's signal fires); without it, it goes on and is kept", async () => {
    for (const cancelAbandoned of [true, false]) {
      const started = gate();
      const finish = gate();
      let signal: AbortSignal | undefined;
      const mock = new MockLanguageModelV4({
        modelId: `mock-${randomUUID()}`,
        doGenerate: async (options) => {
          signal = options.abortSignal!;
          started.open();
          const aborted = new Promise((_, reject) => signal!.addEventListener('abort', () => reject(signal!.reason), { once: true }));
          await Promise.race([finish.opened, aborted]);
          return { content: [{ type: 'text', text: 'kept' }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] };
        },
      });
      const flights = nodes[0]!;
      const model = wrapLanguageModel({
        model: mock,
        middleware: flightMiddleware({ flights, cancelAbandoned, stage: `ai-cancel-${cancelAbandoned}` }),
      });
      const caller = new AbortController();
      const call = generateText({ model, prompt: 'hi', temperature: 0, abortSignal: caller.signal, maxRetries: 0 });
      await started.opened;
      caller.abort();
      await expect(call).rejects.toThrow();
      if (cancelAbandoned) {
        await new Promise<void>((resolve) =>
          signal!.aborted ? resolve() : signal!.addEventListener('abort', () => resolve(), { once: true }),
        );
        expect(signal!.aborted).toBe(true);
      } else {
        expect(signal!.aborted).toBe(false);
        finish.open();
        const next = await generateText({ model, prompt: 'hi', temperature: 0 });
        expect(next.text).toBe('kept');
        expect(mock.doGenerateCalls).toHaveLength(1);
      }
    }
  });

  it('a call with no temperature samples (the providers default to 1): not shared unless share is always', async () => {
    const mock = new MockLanguageModelV4({
      modelId: `mock-${randomUUID()}`,
      doGenerate: async () => ({
        content: [{ type: 'text', text: 'x' }],
        finishReason: { unified: 'stop', raw: undefined },
        usage,
        warnings: [],
      }),
    });
    const model = wrapLanguageModel({ model: mock, middleware: flightMiddleware({ flights: nodes[0]! }) });
    const results = await Promise.all([generateText({ model, prompt: 'hi' }), generateText({ model, prompt: 'hi' })]);
    expect(mock.doGenerateCalls).toHaveLength(2);
    expect(results.every((r) => flightOf(r.providerMetadata) === undefined)).toBe(true);
    const always = wrapLanguageModel({
      model: mock,
      middleware: flightMiddleware({ flights: nodes[0]!, share: 'always', stage: 'ai-always' }),
    });
    await generateText({ model: always, prompt: 'hi' });
    const again = await generateText({ model: always, prompt: 'hi' });
    expect(mock.doGenerateCalls).toHaveLength(3);
    expect(flightOf(again.providerMetadata)?.role).toBe('replay');
  });

  it('refuses bad options with a typed error', () => {
    const flights = nodes[0]!;
    expect(() => flightMiddleware({} as never)).toThrow(FlightConfigurationError);
    expect(() => flightMiddleware({ flights, share: 'sometimes' as never })).toThrow(/share must be one of/);
    expect(() => flightMiddleware({ flights, stage: 'a b' })).toThrow(FlightValidationError);
    expect(() => flightMiddleware({ flights, cancelAbandoned: 'yes' as never })).toThrow(/cancelAbandoned/);
    expect(() => flightMiddleware({ flights, stages: 1 } as never)).toThrow(FlightConfigurationError);
  });
});
