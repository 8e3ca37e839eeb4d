/**
 * Scenario 8 — streaming herd: 3 processes × 100 concurrent callers of one streamed key; the upstream
 * emits 50 chunks over 1 s. Per contender: upstream calls, time to first chunk, how far behind the
 * owner each follower gets its first chunk and every later chunk, the Redis bytes one streamed flight
 * costs (its keys' `MEMORY USAGE` once complete, and the Redis network traffic of the round), and the CPU
 * time of one streamed flight in the 3 processes and in redis-server (figures that do not move with the
 * machine's load the way latencies do).
 *
 * "Behind the owner": a follower's receive time of chunk i minus the owner caller's receive time of
 * chunk i (the owner of the run it followed: the caller whose supplier ran, the one in its own
 * process when there is one, as in `local` mode). A `naive` caller streams its own upstream, so it is measured behind that upstream
 * (its emit time of chunk i). All times are read from the machine's shared monotonic clock.
 */
import type { Redis } from 'ioredis';
import { counterKey, guarded, infoField, prefixOf, scanKeys, type BenchContext, type ResultRow } from '../context.js';
import { FLIGHT_CONTENDERS, REDIS_CONTENDERS, type Contender, type ContenderName } from '../contenders/index.js';
import { nowMs, round, sleep, summarize, waitUntil } from '../stats.js';
import { redisCpu } from './throughput.js';

export interface StreamOptions {
  processes: number;
  callersPerProcess: number;
  /** Chunks the upstream emits per run. */
  chunks: number;
  /** Time between two chunks (the first one after one interval): 50 × 20 ms = 1 s. */
  chunkIntervalMs: number;
  /** Bytes of each chunk (a string). */
  chunkBytes: number;
  /** Extra wait before the first chunk (a model's latency before its first token). @default 0 */
  firstChunkAfterMs?: number;
  rounds: number;
}

export function streamOptions(quick: boolean): StreamOptions {
  return { processes: 3, callersPerProcess: 100, chunks: 50, chunkIntervalMs: 20, chunkBytes: 16, rounds: quick ? 1 : 3 };
}

/** The contenders that can stream: every caller its own upstream (`naive`), or @flight/core's `executeStream`. */
export const STREAM_CONTENDERS: readonly ContenderName[] = ['naive', 'local', ...FLIGHT_CONTENDERS];

export interface StreamUpstreamSpec {
  chunks: number;
  chunkIntervalMs: number;
  chunkBytes: number;
  firstChunkAfterMs?: number;
  /** Redis key incremented once per upstream run (shared by every process). */
  counterKey?: string;
}

/** Chunk i of every run: the same text in every process, so callers can check the sequence they got. */
export const chunkText = (i: number, bytes: number): string => ((texts[bytes] ??= [])[i] ??= `c${i}:`.padEnd(bytes, '.'));
/** The chunk texts by size and index, made once per process: the callers' check of every chunk allocates nothing. */
const texts: string[][] = [];

/**
 * One upstream run: counts itself, then yields `chunks` chunks paced on its start time (chunk i at
 * firstChunkAfterMs + (i + 1) × interval), recording in `emitted` when it handed each one over.
 */
export async function* streamUpstream(spec: StreamUpstreamSpec, emitted: number[], counter?: Redis): AsyncGenerator<string> {
  if (counter && spec.counterKey) await counter.incr(spec.counterKey);
  const start = nowMs() + (spec.firstChunkAfterMs ?? 0);
  for (let i = 0; i < spec.chunks; i++) {
    const wait = start + (i + 1) * spec.chunkIntervalMs - nowMs();
    if (wait > 0) await sleep(wait);
    emitted.push(nowMs());
    yield chunkText(i, spec.chunkBytes);
  }
}

/** What one streaming caller saw. */
export interface StreamCallRecord {
  role: string;
  startMs: number;
  /** When each chunk arrived (shared monotonic ms). */
  chunkMs: number[];
  /** Exactly the upstream's chunk sequence, in order. */
  sameSequence: boolean;
  /** When the upstream run this caller started emitted each chunk (only where this caller's supplier ran). */
  upstreamMs: number[] | null;
  error?: string;
}

async function streamCall(
  contender: Contender,
  key: string,
  spec: StreamUpstreamSpec,
  counter: Redis | undefined,
): Promise<StreamCallRecord> {
  const startMs = nowMs();
  const chunkMs: number[] = [];
  let upstreamMs: number[] | null = null;
  let same = true;
  try {
    if (!contender.stream) throw new Error(`${contender.name} cannot stream`);
    const stream = contender.stream(key, () => streamUpstream(spec, (upstreamMs = []), counter));
    for await (const chunk of stream.chunks) {
      chunkMs.push(nowMs());
      if (chunk !== chunkText(chunkMs.length - 1, spec.chunkBytes)) same = false;
    }
    const role = await stream.role();
    return { role, startMs, chunkMs, sameSequence: same && chunkMs.length === spec.chunks, upstreamMs };
  } catch (error) {
    return {
      role: 'error',
      startMs,
      chunkMs,
      sameSequence: false,
      upstreamMs,
      error: `${(error as Error).name}: ${(error as Error).message}`,
    };
  }
}

/** What one process saw of a round: its callers, and the CPU time it spent (µs, user + system). */
export interface StreamHerdResult {
  calls: StreamCallRecord[];
  cpuUs: number;
}

/** Worker task: `callers` concurrent streaming calls on one key, all started at `startAtMs`. */
export async function streamHerd(
  contender: Contender,
  counter: Redis | undefined,
  args: { key: string; callers: number; startAtMs: number; upstream: StreamUpstreamSpec },
): Promise<StreamHerdResult> {
  await waitUntil(args.startAtMs);
  const cpu = process.cpuUsage();
  const calls = await Promise.all(Array.from({ length: args.callers }, () => streamCall(contender, args.key, args.upstream, counter)));
  const used = process.cpuUsage(cpu);
  return { calls, cpuUs: used.user + used.system };
}

export interface BehindOwner {
  /** Per follower: its first chunk minus its reference's. */
  firstChunk: number[];
  /** Per follower and chunk after the first: its receive time minus its reference's. */
  chunkLag: number[];
  /** The same two for followers in another process than their owner (the chunks came through Redis). */
  remoteFirstChunk: number[];
  remoteChunkLag: number[];
  /** Per owner: its first chunk minus its call's start. */
  ownerFirstChunk: number[];
}

/** The per-round figures: first chunk and per-chunk lag of each follower behind its reference. */
export function behindOwner(processes: readonly StreamCallRecord[][]): BehindOwner {
  const b: BehindOwner = { firstChunk: [], chunkLag: [], remoteFirstChunk: [], remoteChunkLag: [], ownerFirstChunk: [] };
  // The owner: the caller whose supplier ran the upstream (its role is `owner`, or `local` in local mode).
  const ran = (r: StreamCallRecord) => r.role === 'owner' || (r.role !== 'naive' && r.upstreamMs !== null);
  const global = processes.flat().find(ran);
  for (const records of processes) {
    const local = records.find(ran);
    const owner = local ?? global;
    for (const r of records) {
      if (r.role === 'error' || !r.chunkMs.length) continue;
      if (r === owner) {
        b.ownerFirstChunk.push(r.chunkMs[0]! - r.startMs);
        continue;
      }
      // A naive caller runs its own upstream: it is measured behind that.
      const ref = r.role === 'naive' ? r.upstreamMs : owner?.chunkMs;
      if (!ref) continue;
      const remote = r.role !== 'naive' && !local;
      const first = r.chunkMs[0]! - ref[0]!;
      b.firstChunk.push(first);
      if (remote) b.remoteFirstChunk.push(first);
      for (let i = 1; i < Math.min(r.chunkMs.length, ref.length); i++) {
        b.chunkLag.push(r.chunkMs[i]! - ref[i]!);
        if (remote) b.remoteChunkLag.push(r.chunkMs[i]! - ref[i]!);
      }
    }
  }
  return b;
}

/** Sum of `MEMORY USAGE` of `keys`. */
async function memoryUsage(admin: Redis, keys: readonly string[]): Promise<number> {
  if (!keys.length) return 0;
  const p = admin.pipeline();
  for (const k of keys) p.call('MEMORY', 'USAGE', k, 'SAMPLES', '0');
  return ((await p.exec()) ?? []).reduce((sum, [, bytes]) => sum + Number(bytes ?? 0), 0);
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

const netBytes = async (admin: Redis) =>
  (await infoField(admin, 'stats', 'total_net_input_bytes')) + (await infoField(admin, 'stats', 'total_net_output_bytes'));

export async function runStream(ctx: BenchContext, contenders: ContenderName[], opts: StreamOptions): Promise<ResultRow[]> {
  const rows: ResultRow[] = [];
  const workers = ctx.workers.slice(0, opts.processes);
  if (workers.length < opts.processes) throw new Error(`stream needs ${opts.processes} workers`);
  const upstream = {
    chunks: opts.chunks,
    chunkIntervalMs: opts.chunkIntervalMs,
    chunkBytes: opts.chunkBytes,
    firstChunkAfterMs: opts.firstChunkAfterMs ?? 0,
  };
  for (const name of contenders.filter((c) => STREAM_CONTENDERS.includes(c))) {
    await guarded(ctx, rows, 'stream', name, async () => {
      const t0 = nowMs();
      const prefix = prefixOf(ctx, 'stream', name);
      await Promise.all(workers.map((w) => w.call('setup', { name, options: { redisUrl: ctx.redis.url, prefix, resultTtlMs: 60_000 } })));
      const round_ = async (key: string, callers: number, spec: StreamUpstreamSpec) => {
        const ck = counterKey(ctx, 'stream', `${name}:${key}`);
        const startAtMs = nowMs() + 30;
        const redisBefore = await redisCpu(ctx.admin);
        const results: StreamHerdResult[] = await Promise.all(
          workers.map((w) => w.call('streamHerd', { key, callers, startAtMs, upstream: { ...spec, counterKey: ck } })),
        );
        return {
          records: results.map((r) => r.calls),
          clientCpuUs: results.reduce((sum, r) => sum + r.cpuUs, 0),
          redisCpuUs: ((await redisCpu(ctx.admin)) - redisBefore) * 1e6,
          upstream: Number((await ctx.admin.get(ck)) ?? 0),
        };
      };
      // Warm-up (connections, script loading), not measured.
      await round_('warm-up', 5, { ...upstream, chunks: 3 });
      const perRound: number[] = [];
      const behindAll: BehindOwner = { firstChunk: [], chunkLag: [], remoteFirstChunk: [], remoteChunkLag: [], ownerFirstChunk: [] };
      const allFirst: number[] = [];
      const roles: Record<string, number> = {};
      const errors = new Map<string, number>();
      const memory: number[] = [];
      const traffic: number[] = [];
      const clientCpu: number[] = [];
      const redisCpuUs: number[] = [];
      let incomplete = 0;
      for (let r = 0; r < opts.rounds; r++) {
        const keysBefore = new Set(await scanKeys(ctx.admin, `${prefix}*`));
        const netBefore = await netBytes(ctx.admin);
        const {
          records,
          upstream: calls,
          clientCpuUs,
          redisCpuUs: redisUs,
        } = await round_(`stream-${r}`, opts.callersPerProcess, upstream);
        clientCpu.push(clientCpuUs);
        redisCpuUs.push(redisUs);
        traffic.push((await netBytes(ctx.admin)) - netBefore);
        memory.push(
          await memoryUsage(
            ctx.admin,
            (await scanKeys(ctx.admin, `${prefix}*`)).filter((k) => !keysBefore.has(k)),
          ),
        );
        perRound.push(calls);
        const b = behindOwner(records);
        for (const field of Object.keys(b) as (keyof BehindOwner)[]) behindAll[field].push(...b[field]);
        for (const c of records.flat()) {
          roles[c.role] = (roles[c.role] ?? 0) + 1;
          if (c.chunkMs.length) allFirst.push(c.chunkMs[0]! - c.startMs);
          if (!c.sameSequence) incomplete++;
          if (c.error) errors.set(c.error, (errors.get(c.error) ?? 0) + 1);
        }
      }
      await Promise.all(workers.map((w) => w.call('teardown')));
      const first = summarize(allFirst);
      const behind = summarize(behindAll.firstChunk);
      const lag = summarize(behindAll.chunkLag);
      const remoteBehind = summarize(behindAll.remoteFirstChunk);
      const remoteLag = summarize(behindAll.remoteChunkLag);
      const redisBacked = REDIS_CONTENDERS.includes(name);
      rows.push({
        scenario: 'stream',
        contender: name,
        upstreamCalls: Math.max(...perRound),
        upstreamCallsPerRound: perRound,
        p50Ms: first.p50Ms,
        p99Ms: first.p99Ms,
        maxMs: first.maxMs,
        ownerFirstChunkMs: summarize(behindAll.ownerFirstChunk).p50Ms,
        followerFirstChunkVsOwnerP50Ms: behind.p50Ms,
        followerFirstChunkVsOwnerP99Ms: behind.p99Ms,
        chunkLagP50Ms: lag.p50Ms,
        chunkLagP99Ms: lag.p99Ms,
        chunkLagMaxMs: lag.maxMs,
        remoteFirstChunkVsOwnerP50Ms: remoteBehind.p50Ms,
        remoteFirstChunkVsOwnerP99Ms: remoteBehind.p99Ms,
        remoteChunkLagP50Ms: remoteLag.p50Ms,
        remoteChunkLagP99Ms: remoteLag.p99Ms,
        redisBytesPerFlight: redisBacked ? Math.round(mean(memory)) : null,
        redisTrafficBytesPerFlight: redisBacked ? Math.round(mean(traffic)) : null,
        clientCpuMsPerFlight: round(mean(clientCpu) / 1000, 1),
        redisCpuMsPerFlight: redisBacked ? round(mean(redisCpuUs) / 1000, 1) : null,
        chunks: opts.chunks,
        chunkIntervalMs: opts.chunkIntervalMs,
        callers: opts.processes * opts.callersPerProcess,
        rounds: opts.rounds,
        incompleteSequences: incomplete,
        errors: [...errors.values()].reduce((a, b) => a + b, 0),
        errorSamples: [...errors.keys()].slice(0, 3),
        roles,
      });
      ctx.log(
        `stream ${name}: upstream ${perRound.join('/')}, first chunk behind owner p99 ${behind.p99Ms} ms, chunk lag p99 ${lag.p99Ms} ms (${Math.round(nowMs() - t0)} ms)`,
      );
    });
  }
  return rows;
}
