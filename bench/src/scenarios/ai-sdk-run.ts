/**
 * Scenario 15's measurement, in a process of its own on Node >= 22 (the AI SDK 7 needs it; `ai-sdk.ts`
 * starts it): model calls through `@flight/ai-sdk`'s middleware, the AI SDK's OpenAI-compatible provider
 * against the fake model (real HTTP).
 *
 * - **Overhead**: uncontended `generateText` calls, each with a new prompt, to a model answering in about
 *   1 ms — the bare model and the wrapped one (distributed, on each Redis adapter) in turn, each call after
 *   3 ms idle, the order rotated per iteration. **The floor**: the bare call after one round trip to Redis
 *   (a `SET … NX PX … GET`), in the same loop: what any design that makes a call once across the cluster
 *   pays before it may call the model.
 * - **Herd**: 3 nodes (each a SingleFlight with its own connections) × 100 callers of one call, the model
 *   answering in 50 ms: upstream calls per round and the callers' latency; the bare model makes 300 calls.
 *
 * Reads its options from `FLIGHT_AI_BENCH` (JSON) and prints its rows as the last line of its output.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { flightMiddleware } from '@flight/ai-sdk';
import { createSingleFlight, type SingleFlight } from '@flight/core';
import { startFakeModel } from '@flight/fake-model';
import { createIoredisCoordinator } from '@flight/redis-ioredis';
import { createNodeRedisCoordinator } from '@flight/redis-node';
import { generateText, wrapLanguageModel, type LanguageModel } from 'ai';
import { Redis } from 'ioredis';
import type { ResultRow } from '../context.js';
import { nowMs, round, summarize } from '../stats.js';

export interface AiSdkRunConfig {
  redisUrl: string;
  /** The key prefix of this scenario's flights (the run's, so the harness deletes them). */
  prefix: string;
  calls: number;
  herdRounds: number;
  herdCallersPerNode: number;
}

const IDLE_BEFORE_CALL_MS = 3;
type Contender = 'naive' | 'flight-ioredis' | 'flight-node-redis';
const CONTENDERS: readonly Contender[] = ['naive', 'flight-ioredis', 'flight-node-redis'];

async function measure(config: AiSdkRunConfig): Promise<ResultRow[]> {
  const model = await startFakeModel({ port: 0, latencyMs: 1 });
  const flights: SingleFlight[] = [];
  const bare = () =>
    createOpenAICompatible({ name: 'fake', baseURL: `${model.url}/v1`, apiKey: 'sk-bench' }).chatModel('fake-model') as LanguageModel;
  const node = (contender: Contender): LanguageModel => {
    const prefix = `${config.prefix}:${contender}`;
    const coordinator =
      contender === 'flight-ioredis'
        ? createIoredisCoordinator({ redis: config.redisUrl, prefix })
        : createNodeRedisCoordinator({ redis: { url: config.redisUrl }, prefix });
    const flight = createSingleFlight({ coordinator, nodeId: `${contender}-${flights.length}`, defaults: { l1: { enabled: false } } });
    flights.push(flight);
    return wrapLanguageModel({ model: bare() as never, middleware: flightMiddleware({ flights: flight, stage: 'bench' }) });
  };
  const models = new Map<Contender, LanguageModel[]>(
    CONTENDERS.map((c) => [c, c === 'naive' ? [bare(), bare(), bare()] : [node(c), node(c), node(c)]]),
  );
  const ask = (on: LanguageModel, prompt: string) => generateText({ model: on, prompt, temperature: 0, maxRetries: 0 });
  const redis = new Redis(config.redisUrl);
  const rows: ResultRow[] = [];
  try {
    for (let i = 0; i < 50; i++) for (const [, list] of models) for (const m of list) await ask(m, `warm ${randomUUID()}`);
    const single = new Map<Contender, number[]>(CONTENDERS.map((c) => [c, []]));
    const floor: number[] = [];
    const bareModel = models.get('naive')![0]!;
    const timed = async (contender: Contender | 'floor', i: number) => {
      const started = nowMs();
      if (contender === 'floor') await redis.set(`${config.prefix}:floor:${i}`, '1', 'PX', 60_000, 'NX', 'GET');
      await ask(contender === 'floor' ? bareModel : models.get(contender)![0]!, `one ${randomUUID()}`);
      (contender === 'floor' ? floor : single.get(contender)!).push(nowMs() - started);
    };
    const order: readonly (Contender | 'floor')[] = [...CONTENDERS, 'floor'];
    for (let i = 0; i < config.calls; i++)
      for (let j = 0; j < order.length; j++) {
        await sleep(IDLE_BEFORE_CALL_MS);
        await timed(order[(i + j) % order.length]!, i);
      }

    for (const contender of CONTENDERS) {
      const latencies: number[] = [];
      const perRound: number[] = [];
      for (let r = 0; r < config.herdRounds; r++) {
        const prompt = `herd [latency:50] ${randomUUID()}`;
        const before = model.stats().calls;
        await Promise.all(
          models.get(contender)!.flatMap((m) =>
            Array.from({ length: config.herdCallersPerNode }, async () => {
              const started = nowMs();
              await ask(m, prompt);
              latencies.push(nowMs() - started);
            }),
          ),
        );
        perRound.push(model.stats().calls - before);
      }
      const herd = summarize(latencies);
      const one = summarize(single.get(contender)!);
      rows.push({
        scenario: 'ai-sdk',
        contender,
        upstreamCalls: Math.max(...perRound),
        upstreamCallsPerRound: perRound,
        callers: 3 * config.herdCallersPerNode,
        p50Ms: herd.p50Ms,
        p99Ms: herd.p99Ms,
        maxMs: herd.maxMs,
        uncontendedP50Ms: one.p50Ms,
        uncontendedMeanMs: one.meanMs,
        calls: config.calls,
      });
    }
    const floorOf = summarize(floor);
    rows.splice(1, 0, {
      scenario: 'ai-sdk',
      contender: 'floor',
      upstreamCalls: null,
      p50Ms: null,
      p99Ms: null,
      maxMs: null,
      calls: config.calls,
      uncontendedP50Ms: floorOf.p50Ms,
      uncontendedMeanMs: floorOf.meanMs,
    });
    const naive = rows.find((r) => r.contender === 'naive')!;
    for (const r of rows) {
      r.overheadP50Ms = round((r.uncontendedP50Ms as number) - (naive.uncontendedP50Ms as number));
      r.overheadMeanMs = round((r.uncontendedMeanMs as number) - (naive.uncontendedMeanMs as number));
      r.overFloorP50Ms = round((r.uncontendedP50Ms as number) - (floorOf.p50Ms as number));
    }
  } finally {
    await Promise.all(flights.map((f) => f.close()));
    redis.disconnect();
    await model.close();
  }
  return rows;
}

const rows = await measure(JSON.parse(process.env.FLIGHT_AI_BENCH!) as AiSdkRunConfig);
process.stdout.write(`${JSON.stringify(rows)}\n`);
process.exit(0);
