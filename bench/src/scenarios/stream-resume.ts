/**
 * Scenario 9 — resumable streams and the cost of a streamed chunk:
 *
 * - **Cost per batch**: one streamed flight (50 chunks of 16 bytes, 20 ms apart, each its own append)
 *   followed by 1, 10 or 100 callers, on 1 process or spread over 3: every command Redis executed during the
 *   round (`INFO commandstats`) and its network bytes, divided by the chunks. Flat across followers and
 *   processes is the target: an append is one command whoever listens.
 * - **Resume latency**: a caller reads 10 chunks in process 1 and goes away; in process 2 a caller resumes
 *   (`executeStream`'s `after`) — during the run, and again after it completed — and the time from its call
 *   to its first resumed chunk is taken; each resumed caller must get exactly the chunks after its position.
 */
import type { BenchContext, ResultRow } from '../context.js';
import { counterKey, guarded, infoField, prefixOf } from '../context.js';
import { REDIS_CONTENDERS, type Contender, type ContenderName } from '../contenders/index.js';
import { nowMs, round, summarize, waitUntil } from '../stats.js';
import { chunkText, STREAM_CONTENDERS, streamUpstream, type StreamUpstreamSpec } from './stream.js';

export interface StreamResumeOptions {
  chunks: number;
  chunkIntervalMs: number;
  chunkBytes: number;
  followers: readonly number[];
  processes: readonly number[];
  /** Resume measurements: rounds, and resumers per round. */
  resumeRounds: number;
  resumers: number;
}

export function streamResumeOptions(quick: boolean): StreamResumeOptions {
  return {
    chunks: 50,
    chunkIntervalMs: 20,
    chunkBytes: 16,
    followers: [1, 10, 100],
    processes: [1, 3],
    resumeRounds: quick ? 3 : 10,
    resumers: 10,
  };
}

/** Worker task: a caller that reads `stopAfter` chunks (then leaves) or resumes `after`; when each chunk arrived. */
export async function streamReader(
  contender: Contender,
  counter: unknown,
  args: {
    key: string;
    callers: number;
    startAtMs: number;
    upstream: StreamUpstreamSpec;
    stopAfter?: number;
    after?: { epoch: number | undefined; index: number };
  },
): Promise<{ startMs: number; calls: { chunkMs: number[]; exact: boolean; epoch: number | undefined; error?: string }[] }> {
  await waitUntil(args.startAtMs);
  const startMs = nowMs();
  const calls = await Promise.all(
    Array.from({ length: args.callers }, async () => {
      const chunkMs: number[] = [];
      let exact = true;
      const from = args.after?.index ?? 0;
      try {
        const run = contender.stream!(args.key, () => streamUpstream(args.upstream, [], counter as never), args.after);
        for await (const chunk of run.chunks) {
          if (chunk !== chunkText(from + chunkMs.length, args.upstream.chunkBytes)) exact = false;
          chunkMs.push(nowMs());
          if (chunkMs.length === args.stopAfter) return { chunkMs, exact, epoch: run.epoch?.() };
        }
        return { chunkMs, exact: exact && from + chunkMs.length === args.upstream.chunks, epoch: run.epoch?.() };
      } catch (error) {
        return { chunkMs, exact: false, epoch: undefined, error: (error as Error).message };
      }
    }),
  );
  return { startMs, calls };
}

/** Calls and bytes of every command Redis has executed so far. */
async function commandTotals(ctx: BenchContext): Promise<{ calls: number; bytes: number; byCommand: Map<string, number> }> {
  const stats = await ctx.admin.info('commandstats');
  let calls = 0;
  const byCommand = new Map<string, number>();
  for (const match of stats.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    calls += Number(match[2]);
    byCommand.set(match[1]!, Number(match[2]));
  }
  const bytes =
    (await infoField(ctx.admin, 'stats', 'total_net_input_bytes')) + (await infoField(ctx.admin, 'stats', 'total_net_output_bytes'));
  return { calls, bytes, byCommand };
}

type ReaderResult = Awaited<ReturnType<typeof streamReader>>;

export async function runStreamResume(ctx: BenchContext, contenders: ContenderName[], opts: StreamResumeOptions): Promise<ResultRow[]> {
  const rows: ResultRow[] = [];
  const workers = ctx.workers.slice(0, 3);
  const upstream: StreamUpstreamSpec = { chunks: opts.chunks, chunkIntervalMs: opts.chunkIntervalMs, chunkBytes: opts.chunkBytes };
  for (const name of contenders.filter((c) => STREAM_CONTENDERS.includes(c) && REDIS_CONTENDERS.includes(c))) {
    await guarded(ctx, rows, 'stream-resume', name, async () => {
      const prefix = prefixOf(ctx, 'stream-resume', name);
      await Promise.all(workers.map((w) => w.call('setup', { name, options: { redisUrl: ctx.redis.url, prefix, resultTtlMs: 60_000 } })));
      const read = (w: number, args: Omit<Parameters<typeof streamReader>[2], 'startAtMs' | 'upstream'> & { startAtMs?: number }) =>
        workers[w]!.call('streamReader', {
          startAtMs: nowMs() + 20,
          upstream: { ...upstream, counterKey: counterKey(ctx, 'stream-resume', `${name}:${args.key}`) },
          ...args,
        }) as Promise<ReaderResult>;
      await read(0, { key: 'warm-up', callers: 2 });
      await Promise.all([1, 2].map((w) => read(w, { key: 'warm-up', callers: 1 })));

      // Cost per batch.
      const cost: Record<string, { commandsPerChunk: number | null; bytesPerChunk: number }> = {};
      let incomplete = 0;
      for (const processes of opts.processes) {
        for (const followers of opts.followers) {
          const key = `cost-${processes}-${followers}`;
          const callers = followers + 1;
          const per = Array.from({ length: processes }, (_, i) => Math.floor(callers / processes) + (i < callers % processes ? 1 : 0));
          const before = await commandTotals(ctx);
          const startAtMs = nowMs() + 30;
          const results = await Promise.all(per.map((n, w) => read(w, { key, callers: n, startAtMs })));
          const after = await commandTotals(ctx);
          incomplete += results.flatMap((r) => r.calls).filter((c) => !c.exact).length;
          const spent = [...after.byCommand].map(([c, n]) => [c, n - (before.byCommand.get(c) ?? 0)] as const).filter(([, n]) => n > 0);
          ctx.log(`stream-resume ${name} ${processes}p×${followers}f: ${spent.map(([c, n]) => `${c} ${n}`).join(', ')}`);
          cost[`${processes}p×${followers}f`] = {
            commandsPerChunk: round((after.calls - before.calls) / opts.chunks, 2),
            bytesPerChunk: Math.round((after.bytes - before.bytes) / opts.chunks),
          };
        }
      }

      // Resume latency, during the run and after it.
      const during: number[] = [];
      const afterRun: number[] = [];
      for (let r = 0; r < opts.resumeRounds; r++) {
        const key = `resume-${r}`;
        const owner = read(0, { key, callers: 1 });
        const left = (await read(1, { key, callers: 1, stopAfter: 10 })).calls[0]!;
        const position = { epoch: left.epoch, index: 10 };
        const resumed = await read(2, { key, callers: opts.resumers, after: position });
        for (const c of resumed.calls) {
          if (!c.exact) incomplete++;
          if (c.chunkMs.length) during.push(c.chunkMs[0]! - resumed.startMs);
        }
        await owner;
        const late = await read(1, { key, callers: opts.resumers, after: { epoch: left.epoch, index: 40 } });
        for (const c of late.calls) {
          if (!c.exact) incomplete++;
          if (c.chunkMs.length) afterRun.push(c.chunkMs[0]! - late.startMs);
        }
      }
      await Promise.all(workers.map((w) => w.call('teardown')));
      const d = summarize(during);
      const a = summarize(afterRun);
      rows.push({
        scenario: 'stream-resume',
        contender: name,
        upstreamCalls: null,
        // The row's latency columns: resuming during the run, from the call to the first resumed chunk.
        p50Ms: d.p50Ms,
        p99Ms: d.p99Ms,
        maxMs: d.maxMs,
        commandsPerChunk: cost,
        resumeDuringRunP50Ms: d.p50Ms,
        resumeDuringRunP99Ms: d.p99Ms,
        resumeAfterRunP50Ms: a.p50Ms,
        resumeAfterRunP99Ms: a.p99Ms,
        resumes: during.length + afterRun.length,
        incompleteSequences: incomplete,
      });
      ctx.log(
        `stream-resume ${name}: commands/chunk ${Object.entries(cost)
          .map(([k, v]) => `${k} ${v.commandsPerChunk}`)
          .join(
            ', ',
          )}; resume first chunk p50/p99 during ${d.p50Ms}/${d.p99Ms} ms, after ${a.p50Ms}/${a.p99Ms} ms; incomplete ${incomplete}`,
      );
    });
  }
  return rows;
}
