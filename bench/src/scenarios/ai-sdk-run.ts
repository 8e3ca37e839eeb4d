/**
 * Scenario 15's measurement, in a process of its own on Node >= 22 (the AI SDK 7 needs it; `ai-sdk.ts`
 * starts it): model calls through `@flight/ai-sdk`'s middleware, the AI SDK's OpenAI-compatible provider
 * against the fake model (real HTTP), as `model-calls.ts` measures them.
 *
 * Reads its options from `FLIGHT_AI_BENCH` (JSON) and prints its rows as the last line of its output.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { flightMiddleware } from '@flight/ai-sdk';
import { createSingleFlight, type SingleFlight } from '@flight/core';
import { startFakeModel } from '@flight/fake-model';
import { createIoredisCoordinator } from '@flight/redis-ioredis';
import { createNodeRedisCoordinator } from '@flight/redis-node';
import { generateText, wrapLanguageModel, type LanguageModel } from 'ai';
import { Redis } from 'ioredis';
import type { ResultRow } from '../context.js';
import { MODEL_CONTENDERS, measureModelCalls, type ModelContender } from './model-calls.js';

export interface AiSdkRunConfig {
  redisUrl: string;
  /** The key prefix of this scenario's flights (the run's, so the harness deletes them). */
  prefix: string;
  calls: number;
  herdRounds: number;
  herdCallersPerNode: number;
}

async function measure(config: AiSdkRunConfig): Promise<ResultRow[]> {
  const model = await startFakeModel({ port: 0, latencyMs: 1 });
  const flights: SingleFlight[] = [];
  const bare = () =>
    createOpenAICompatible({ name: 'fake', baseURL: `${model.url}/v1`, apiKey: 'sk-bench' }).chatModel('fake-model') as LanguageModel;
  const node = (contender: ModelContender): LanguageModel => {
    const prefix = `${config.prefix}:${contender}`;
    const coordinator =
      contender === 'flight-ioredis'
        ? createIoredisCoordinator({ redis: config.redisUrl, prefix })
        : createNodeRedisCoordinator({ redis: { url: config.redisUrl }, prefix });
    const flight = createSingleFlight({ coordinator, nodeId: `${contender}-${flights.length}`, defaults: { l1: { enabled: false } } });
    flights.push(flight);
    return wrapLanguageModel({ model: bare() as never, middleware: flightMiddleware({ flights: flight, stage: 'bench' }) });
  };
  const models = new Map<ModelContender, LanguageModel[]>(
    MODEL_CONTENDERS.map((c) => [c, c === 'naive' ? [bare(), bare(), bare()] : [node(c), node(c), node(c)]]),
  );
  const redis = new Redis(config.redisUrl);
  try {
    return await measureModelCalls({
      scenario: 'ai-sdk',
      calls: config.calls,
      herdRounds: config.herdRounds,
      herdCallersPerNode: config.herdCallersPerNode,
      call: (contender, i, prompt) => generateText({ model: models.get(contender)![i]!, prompt, temperature: 0, maxRetries: 0 }),
      floorTrip: (i) => redis.set(`${config.prefix}:floor:${i}`, '1', 'PX', 60_000, 'NX', 'GET'),
      upstreamCalls: () => model.stats().calls,
    });
  } finally {
    await Promise.all(flights.map((f) => f.close()));
    redis.disconnect();
    await model.close();
  }
}

const rows = await measure(JSON.parse(process.env.FLIGHT_AI_BENCH!) as AiSdkRunConfig);
process.stdout.write(`${JSON.stringify(rows)}\n`);
process.exit(0);
