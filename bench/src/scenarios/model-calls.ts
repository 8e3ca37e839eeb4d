/**
 * The measurement shared by the model-call scenarios (11, `@flight/openai`; 15, `@flight/ai-sdk`), whatever
 * the SDK:
 *
 * - **Overhead**: uncontended calls, each with a new prompt, to a model answering in about 1 ms — the bare
 *   model and the wrapped one (distributed, on each Redis adapter) in turn, each call after 3 ms idle (an
 *   uncontended call meets a quiet node, and none pays for the previous one's leftover work), the order
 *   rotated per iteration, so a drift of the machine lands on all of them. The overhead is the wrapped call's
 *   time minus the bare call's.
 * - **The floor**: the bare call after one round trip to Redis (a `SET … NX PX … GET`, what acquiring an
 *   uncontended flight needs at the least), in the same loop: what any design that makes a call once across
 *   the cluster pays before it may call the model, whatever else it does.
 * - **Herd**: 3 nodes (each a SingleFlight with its own connections) × `herdCallersPerNode` callers of one
 *   call, the model answering in 50 ms: upstream calls per round and the callers' latency; the bare model
 *   makes one call per caller.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ResultRow } from '../context.js';
import { nowMs, round, summarize } from '../stats.js';

export type ModelContender = 'naive' | 'flight-ioredis' | 'flight-node-redis';
export const MODEL_CONTENDERS: readonly ModelContender[] = ['naive', 'flight-ioredis', 'flight-node-redis'];

/** The idle time before each uncontended call, so that no call pays for the previous one's leftover work. */
const IDLE_BEFORE_CALL_MS = 3;

export interface ModelCallsPlan {
  scenario: string;
  /** Uncontended calls per contender. */
  calls: number;
  herdRounds: number;
  herdCallersPerNode: number;
  /** Calls node `node` (0–2) of `contender` with `prompt` (the prompt's `[latency:50]` slows the model down). */
  call(contender: ModelContender, node: number, prompt: string): Promise<unknown>;
  /** The floor's round trip: a `SET … NX PX … GET` of key number `i`. */
  floorTrip(i: number): Promise<unknown>;
  /** The model's upstream calls so far. */
  upstreamCalls(): number;
}

/** The rows of `plan`: one per contender, and the floor's after the bare model's. */
export async function measureModelCalls(plan: ModelCallsPlan): Promise<ResultRow[]> {
  // Warm-up: connections, scripts, and the code paths compiled (not measured).
  for (let i = 0; i < 50; i++)
    for (const contender of MODEL_CONTENDERS) for (let node = 0; node < 3; node++) await plan.call(contender, node, `warm ${randomUUID()}`);

  const single = new Map<ModelContender, number[]>(MODEL_CONTENDERS.map((c) => [c, []]));
  const floor: number[] = [];
  /** One uncontended call of `contender` (or the floor), timed. */
  const timed = async (contender: ModelContender | 'floor', i: number) => {
    const started = nowMs();
    if (contender === 'floor') await plan.floorTrip(i);
    await plan.call(contender === 'floor' ? 'naive' : contender, 0, `one ${randomUUID()}`);
    (contender === 'floor' ? floor : single.get(contender)!).push(nowMs() - started);
  };
  const order: readonly (ModelContender | 'floor')[] = [...MODEL_CONTENDERS, 'floor'];
  for (let i = 0; i < plan.calls; i++)
    for (let j = 0; j < order.length; j++) {
      await sleep(IDLE_BEFORE_CALL_MS);
      await timed(order[(i + j) % order.length]!, i);
    }

  const rows: ResultRow[] = [];
  for (const contender of MODEL_CONTENDERS) {
    const { latencies, perRound } = await herd(plan, contender);
    const callers = summarize(latencies);
    const one = summarize(single.get(contender)!);
    rows.push({
      scenario: plan.scenario,
      contender,
      upstreamCalls: Math.max(...perRound),
      upstreamCallsPerRound: perRound,
      callers: 3 * plan.herdCallersPerNode,
      p50Ms: callers.p50Ms,
      p99Ms: callers.p99Ms,
      maxMs: callers.maxMs,
      uncontendedP50Ms: one.p50Ms,
      uncontendedMeanMs: one.meanMs,
      calls: plan.calls,
    });
  }
  // The floor: no herd of its own (it is no single-flight), so its herd columns stay empty.
  const floorOf = summarize(floor);
  rows.splice(1, 0, {
    scenario: plan.scenario,
    contender: 'floor',
    upstreamCalls: null,
    p50Ms: null,
    p99Ms: null,
    maxMs: null,
    calls: plan.calls,
    uncontendedP50Ms: floorOf.p50Ms,
    uncontendedMeanMs: floorOf.meanMs,
  });
  const bare = rows.find((r) => r.contender === 'naive')!;
  for (const r of rows) {
    r.overheadP50Ms = round((r.uncontendedP50Ms as number) - (bare.uncontendedP50Ms as number));
    r.overheadMeanMs = round((r.uncontendedMeanMs as number) - (bare.uncontendedMeanMs as number));
    r.overFloorP50Ms = round((r.uncontendedP50Ms as number) - (floorOf.p50Ms as number));
  }
  return rows;
}

/** `herdRounds` rounds of every caller of `contender`'s three nodes asking one call at once. */
async function herd(plan: ModelCallsPlan, contender: ModelContender): Promise<{ latencies: number[]; perRound: number[] }> {
  const latencies: number[] = [];
  const perRound: number[] = [];
  for (let r = 0; r < plan.herdRounds; r++) {
    const prompt = `herd [latency:50] ${randomUUID()}`;
    const before = plan.upstreamCalls();
    await Promise.all(
      [0, 1, 2].flatMap((node) =>
        Array.from({ length: plan.herdCallersPerNode }, async () => {
          const started = nowMs();
          await plan.call(contender, node, prompt);
          latencies.push(nowMs() - started);
        }),
      ),
    );
    perRound.push(plan.upstreamCalls() - before);
  }
  return { latencies, perRound };
}
