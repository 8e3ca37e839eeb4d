/**
 * Scenario 11 — model calls through `@flight/openai`, against the fake model (OpenAI wire format, real HTTP):
 * the overhead of an uncontended call over the bare SDK and over the floor, and a herd of 3 nodes × 100
 * callers, as `model-calls.ts` measures them. Everything runs in the harness process (its event loop
 * carries the 300 callers and the model server).
 */
import { createSingleFlight, type SingleFlight } from '@flight/core';
import { startFakeModel } from '@flight/fake-model';
import { withFlights } from '@flight/openai';
import { createIoredisCoordinator } from '@flight/redis-ioredis';
import { createNodeRedisCoordinator } from '@flight/redis-node';
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import type { BenchContext, ResultRow } from '../context.js';
import { prefixOf } from '../context.js';
import { MODEL_CONTENDERS, measureModelCalls, type ModelContender } from './model-calls.js';

export interface OpenAIOptions {
  /** Uncontended calls per contender. */
  calls: number;
  herdRounds: number;
  herdCallersPerNode: number;
}

export function openaiOptions(quick: boolean): OpenAIOptions {
  return { calls: quick ? 150 : 600, herdRounds: quick ? 2 : 5, herdCallersPerNode: 100 };
}

export async function runOpenAI(ctx: BenchContext, opts: OpenAIOptions): Promise<ResultRow[]> {
  const model = await startFakeModel({ port: 0, latencyMs: 1 });
  const flights: SingleFlight[] = [];
  const sdk = () => new OpenAI({ baseURL: `${model.url}/v1`, apiKey: 'sk-bench', maxRetries: 0 });
  const node = (contender: ModelContender) => {
    const prefix = prefixOf(ctx, 'openai', contender);
    const coordinator =
      contender === 'flight-ioredis'
        ? createIoredisCoordinator({ redis: ctx.redis.url, prefix })
        : createNodeRedisCoordinator({ redis: { url: ctx.redis.url }, prefix });
    const flight = createSingleFlight({ coordinator, nodeId: `${contender}-${flights.length}`, defaults: { l1: { enabled: false } } });
    flights.push(flight);
    return withFlights(sdk(), { flights: flight, stage: 'bench' });
  };
  /** Three nodes per contender; the bare SDK thrice. */
  const clients = new Map<ModelContender, OpenAI[]>(
    MODEL_CONTENDERS.map((c) => [c, c === 'naive' ? [sdk(), sdk(), sdk()] : [node(c), node(c), node(c)]]),
  );
  const redis = new Redis(ctx.redis.url);
  const floorPrefix = prefixOf(ctx, 'openai', 'floor');
  try {
    const rows = await measureModelCalls({
      scenario: 'openai',
      ...opts,
      call: (contender, i, content) =>
        clients.get(contender)![i]!.chat.completions.create({ model: 'fake-model', temperature: 0, messages: [{ role: 'user', content }] }),
      floorTrip: (i) => redis.set(`${floorPrefix}:${i}`, '1', 'PX', 60_000, 'NX', 'GET'),
      upstreamCalls: () => model.stats().calls,
    });
    for (const r of rows)
      ctx.log(
        `openai ${r.contender}: uncontended p50 ${r.uncontendedP50Ms} ms (overhead ${r.overheadP50Ms}), herd upstream ${(r.upstreamCallsPerRound as number[] | undefined)?.join('/') ?? '-'} p99 ${r.p99Ms ?? '-'} ms`,
      );
    return rows;
  } finally {
    await Promise.all(flights.map((f) => f.close()));
    redis.disconnect();
    await model.close();
  }
}
