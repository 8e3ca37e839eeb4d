/**
 * Scenario 1 — herd: 3 processes × 100 concurrent callers on one key, upstream 100 ms.
 * Upstream calls are counted by a shared Redis INCR; latency is each caller's own call time.
 */
import { counterKey, guarded, prefixOf, type BenchContext, type ResultRow } from '../context.js';
import type { ContenderName } from '../contenders/index.js';
import type { BatchResult } from '../tasks.js';
import { nowMs, round, summarize } from '../stats.js';

export interface HerdOptions {
  processes: number;
  callersPerProcess: number;
  upstreamMs: number;
  rounds: number;
}

export function herdOptions(quick: boolean): HerdOptions {
  return { processes: 3, callersPerProcess: 100, upstreamMs: 100, rounds: quick ? 2 : 5 };
}

export async function runHerd(ctx: BenchContext, contenders: ContenderName[], opts: HerdOptions): Promise<ResultRow[]> {
  const rows: ResultRow[] = [];
  const workers = ctx.workers.slice(0, opts.processes);
  if (workers.length < opts.processes) throw new Error(`herd needs ${opts.processes} workers`);
  for (const name of contenders) {
    await guarded(ctx, rows, 'herd', name, async () => {
      const t0 = nowMs();
      const prefix = prefixOf(ctx, 'herd', name);
      await Promise.all(workers.map((w) => w.call('setup', { name, options: { redisUrl: ctx.redis.url, prefix, resultTtlMs: 60_000 } })));
      const round_ = async (key: string, callers: number, upstreamMs: number) => {
        const ck = counterKey(ctx, 'herd', `${name}:${key}`);
        const startAtMs = nowMs() + 30;
        const results: BatchResult[] = await Promise.all(
          workers.map((w) =>
            w.call('herd', { key, callers, startAtMs, upstream: { delayMs: upstreamMs, payloadBytes: 1024, counterKey: ck } }),
          ),
        );
        return { results, upstream: Number((await ctx.admin.get(ck)) ?? 0) };
      };
      // Warm-up (connections, script loading), not measured.
      await round_('warm-up', 5, 5);
      const latencies: number[] = [];
      const perRound: number[] = [];
      const roles: Record<string, number> = {};
      const errors = new Map<string, number>();
      for (let r = 0; r < opts.rounds; r++) {
        const { results, upstream } = await round_(`herd-${r}`, opts.callersPerProcess, opts.upstreamMs);
        perRound.push(upstream);
        for (const res of results) {
          for (const c of res.calls) {
            latencies.push(c.endMs - c.startMs);
            roles[c.role] = (roles[c.role] ?? 0) + 1;
            if (c.error) errors.set(c.error, (errors.get(c.error) ?? 0) + 1);
          }
        }
      }
      await Promise.all(workers.map((w) => w.call('teardown')));
      const s = summarize(latencies);
      rows.push({
        scenario: 'herd',
        contender: name,
        upstreamCalls: Math.max(...perRound),
        upstreamCallsPerRound: perRound,
        p50Ms: s.p50Ms,
        p99Ms: s.p99Ms,
        maxMs: s.maxMs,
        overheadMs: round(s.p99Ms === null ? null : s.p99Ms - opts.upstreamMs),
        upstreamMs: opts.upstreamMs,
        callers: opts.processes * opts.callersPerProcess,
        rounds: opts.rounds,
        errors: [...errors.values()].reduce((a, b) => a + b, 0),
        errorSamples: [...errors.keys()].slice(0, 3),
        roles,
      });
      ctx.log(`herd ${name}: upstream ${perRound.join('/')} p99 ${s.p99Ms} ms (${Math.round(nowMs() - t0)} ms)`);
    });
  }
  const naive = rows.find((r) => r.contender === 'naive');
  for (const r of rows) r.overNaiveMs = naive && r.p99Ms !== null && naive.p99Ms !== null ? round(r.p99Ms - naive.p99Ms) : null;
  return rows;
}
