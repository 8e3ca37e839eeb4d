/**
 * Scenario 11 — model calls through `@flight/openai`, against the fake model (OpenAI wire format, real HTTP):
 *
 * - **Overhead**: uncontended chat calls, each with a new prompt, to a model answering in about 1 ms — the
 *   bare SDK and the wrapped client (distributed, on each Redis adapter) in turn, each call after 3 ms idle
 *   (an uncontended call meets a quiet node, and none pays for the previous one's leftover work), the order
 *   rotated per iteration, so a drift of the machine lands on all of them. The overhead is the wrapped
 *   call's time minus the bare call's.
 * - **The floor**: the bare SDK call after one round trip to Redis (a `SET … NX PX … GET`, what acquiring an
 *   uncontended flight needs at the least), in the same loop: what any design that makes a call once across
 *   the cluster pays before it may call the model, whatever else it does.
 * - **Herd**: 3 nodes (each a SingleFlight with its own connections) × 100 callers of one chat call, the model
 *   answering in 50 ms: upstream calls per round and the callers' latency; the bare SDK makes 300 calls.
 *
 * Everything runs in the harness process (its event loop carries the 300 callers and the model server).
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { createSingleFlight, type SingleFlight } from '@flight/core';
import { startFakeModel } from '@flight/fake-model';
import { withFlights } from '@flight/openai';
import { createIoredisCoordinator } from '@flight/redis-ioredis';
import { createNodeRedisCoordinator } from '@flight/redis-node';
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import type { BenchContext, ResultRow } from '../context.js';
import { prefixOf } from '../context.js';
import { nowMs, round, summarize } from '../stats.js';

export interface OpenAIOptions {
  /** Uncontended calls per contender. */
  calls: number;
  herdRounds: number;
  herdCallersPerNode: number;
}

/** The idle time before each uncontended call, so that no call pays for the previous one's leftover work. */
const IDLE_BEFORE_CALL_MS = 3;

export function openaiOptions(quick: boolean): OpenAIOptions {
  return { calls: quick ? 150 : 600, herdRounds: quick ? 2 : 5, herdCallersPerNode: 100 };
}

type Contender = 'naive' | 'flight-ioredis' | 'flight-node-redis';
const CONTENDERS: readonly Contender[] = ['naive', 'flight-ioredis', 'flight-node-redis'];

export async function runOpenAI(ctx: BenchContext, opts: OpenAIOptions): Promise<ResultRow[]> {
  const model = await startFakeModel({ port: 0, latencyMs: 1 });
  const flights: SingleFlight[] = [];
  const sdk = () => new OpenAI({ baseURL: `${model.url}/v1`, apiKey: 'sk-bench', maxRetries: 0 });
  const node = (contender: Contender) => {
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
  const clients = new Map<Contender, OpenAI[]>(
    CONTENDERS.map((c) => [c, c === 'naive' ? [sdk(), sdk(), sdk()] : [node(c), node(c), node(c)]]),
  );
  const ask = (content: string) => ({ model: 'fake-model', temperature: 0, messages: [{ role: 'user' as const, content }] });
  const rows: ResultRow[] = [];
  const redis = new Redis(ctx.redis.url);
  try {
    // Warm-up: connections, scripts, and the code paths compiled (not measured).
    for (let i = 0; i < 50; i++)
      for (const [, list] of clients) for (const client of list) await client.chat.completions.create(ask(`warm ${randomUUID()}`));

    const single = new Map<Contender, number[]>(CONTENDERS.map((c) => [c, []]));
    const floor: number[] = [];
    const bareClient = clients.get('naive')![0]!;
    const floorPrefix = prefixOf(ctx, 'openai', 'floor');
    /** One uncontended call of `contender` (or the floor), timed. */
    const timed = async (contender: Contender | 'floor', i: number) => {
      const started = nowMs();
      if (contender === 'floor') await redis.set(`${floorPrefix}:${i}`, '1', 'PX', 60_000, 'NX', 'GET');
      const client = contender === 'floor' ? bareClient : clients.get(contender)![0]!;
      await client.chat.completions.create(ask(`one ${randomUUID()}`));
      (contender === 'floor' ? floor : single.get(contender)!).push(nowMs() - started);
    };
    const order: readonly (Contender | 'floor')[] = [...CONTENDERS, 'floor'];
    for (let i = 0; i < opts.calls; i++) {
      // Each call starts on an idle process (nothing left of the previous call's work, such as a store in the
      // background), in an order rotated per iteration.
      for (let j = 0; j < order.length; j++) {
        await sleep(IDLE_BEFORE_CALL_MS);
        await timed(order[(i + j) % order.length]!, i);
      }
    }
    const floorOf = summarize(floor);

    for (const contender of CONTENDERS) {
      const latencies: number[] = [];
      const perRound: number[] = [];
      for (let r = 0; r < opts.herdRounds; r++) {
        const body = ask(`herd [latency:50] ${randomUUID()}`);
        const before = model.stats().calls;
        await Promise.all(
          clients.get(contender)!.flatMap((client) =>
            Array.from({ length: opts.herdCallersPerNode }, async () => {
              const started = nowMs();
              await client.chat.completions.create(body);
              latencies.push(nowMs() - started);
            }),
          ),
        );
        perRound.push(model.stats().calls - before);
      }
      const herd = summarize(latencies);
      const one = summarize(single.get(contender)!);
      rows.push({
        scenario: 'openai',
        contender,
        upstreamCalls: Math.max(...perRound),
        upstreamCallsPerRound: perRound,
        callers: 3 * opts.herdCallersPerNode,
        p50Ms: herd.p50Ms,
        p99Ms: herd.p99Ms,
        maxMs: herd.maxMs,
        uncontendedP50Ms: one.p50Ms,
        uncontendedMeanMs: one.meanMs,
        calls: opts.calls,
      });
    }
    // The floor: no herd of its own (it is no single-flight), so its herd columns stay empty.
    const floorRow = { upstreamCalls: null, p50Ms: null, p99Ms: null, maxMs: null, calls: opts.calls };
    rows.splice(1, 0, {
      scenario: 'openai',
      contender: 'floor',
      ...floorRow,
      uncontendedP50Ms: floorOf.p50Ms,
      uncontendedMeanMs: floorOf.meanMs,
    });
    const bare = rows.find((r) => r.contender === 'naive')!;
    for (const r of rows) {
      r.overheadP50Ms = round((r.uncontendedP50Ms as number) - (bare.uncontendedP50Ms as number));
      r.overheadMeanMs = round((r.uncontendedMeanMs as number) - (bare.uncontendedMeanMs as number));
      ctx.log(
        `openai ${r.contender}: uncontended p50 ${r.uncontendedP50Ms} ms (overhead ${r.overheadP50Ms}), herd upstream ${(r.upstreamCallsPerRound as number[] | undefined)?.join('/') ?? '-'} p99 ${r.p99Ms ?? '-'} ms`,
      );
    }
  } finally {
    await Promise.all(flights.map((f) => f.close()));
    redis.disconnect();
    await model.close();
  }
  return rows;
}
