/**
 * Scenario 12 — expiry under load: 8 processes × 500 callers on a key whose result just expired (its fresh
 * time over, inside its stale window), upstream 200 ms. A good answer is one upstream call for the whole
 * burst and callers answered as fast as a fresh replay: flight serves the stale value while one refresh runs
 * across the cluster; bentocache (grace) and cache-manager (refreshThreshold) do the same per process.
 * The fresh replay is measured in the same bursts: every process also has 500 callers on a key still fresh,
 * launched in turn with the expired key's, so both meet the same load (8 processes and redis-server on the
 * machine's cores) and the comparison is the paths', not two bursts' luck.
 * Upstream calls are counted by a shared Redis INCR per key and burst; latency is each caller's own call time.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { counterKey, guarded, prefixOf, type BenchContext, type ResultRow } from '../context.js';
import type { ContenderName } from '../contenders/index.js';
import { startWorkers, stopWorkers, type Worker } from '../pool.js';
import type { BatchResult } from '../tasks.js';
import { nowMs, round, summarize } from '../stats.js';

export interface ExpiryOptions {
  processes: number;
  callersPerProcess: number;
  /** The result's fresh time. */
  freshMs: number;
  /** How long past it the result may be served while a refresh runs. */
  staleMs: number;
  upstreamMs: number;
  rounds: number;
}

/** Unmeasured rounds before the measured ones: a process's first stale bursts run its stale path cold. */
const WARM_UP_ROUNDS = 2;

/** The contenders that can serve an expired value while refreshing it. */
export const EXPIRY_CONTENDERS: readonly ContenderName[] = ['bentocache', 'cache-manager', 'flight-ioredis', 'flight-node-redis'];

export function expiryOptions(quick: boolean): ExpiryOptions {
  return { processes: 8, callersPerProcess: 500, freshMs: 1000, staleMs: 60_000, upstreamMs: 200, rounds: quick ? 2 : 4 };
}

/** The simulated upstream of every call: `upstreamMs` late, 1 KB, counted under `counter`. */
const upstreamOf = (counter: string, upstreamMs: number) => ({ delayMs: upstreamMs, payloadBytes: 1024, counterKey: counter });

/** One caller on `key` in the first worker: stores its first result. */
async function fill(workers: Worker[], key: string, counter: string, upstreamMs: number) {
  const startAtMs = nowMs() + 30;
  await workers[0]!.call('herd', { key, callers: 1, startAtMs, upstream: upstreamOf(counter, upstreamMs) });
}

/** One burst: `callers` on each key in every worker, started together and launched in turn; the calls it made. */
async function burst(workers: Worker[], keys: { key: string; counter: string }[], callers: number, upstreamMs: number) {
  const startAtMs = nowMs() + 30;
  const bursts = keys.map(({ key, counter }) => ({ key, upstream: upstreamOf(counter, upstreamMs) }));
  const results: BatchResult[] = await Promise.all(workers.map((w) => w.call('herds', { bursts, callers, startAtMs })));
  return results.flatMap((r) => r.calls);
}

export async function runExpiry(ctx: BenchContext, contenders: ContenderName[], opts: ExpiryOptions): Promise<ResultRow[]> {
  const rows: ResultRow[] = [];
  const names = contenders.filter((c) => EXPIRY_CONTENDERS.includes(c));
  if (names.length === 0) return rows;
  const workers = await startWorkers(opts.processes);
  try {
    await Promise.all(workers.map((w) => w.call('init', { counterUrl: ctx.redis.url })));
    for (const name of names) {
      await guarded(ctx, rows, 'expiry', name, async () => {
        const t0 = nowMs();
        const prefix = prefixOf(ctx, 'expiry', name);
        const options = { redisUrl: ctx.redis.url, prefix, resultTtlMs: opts.freshMs, staleMs: opts.staleMs };
        await Promise.all(workers.map((w) => w.call('setup', { name, options })));
        const count = async (key: string) => Number((await ctx.admin.get(key)) ?? 0);
        const fresh: number[] = [];
        const expired: number[] = [];
        const perRound: number[] = [];
        const roles: Record<string, number> = {};
        const errors = new Map<string, number>();
        // Two rounds warm up (connections, scripts, and the fresh and the stale paths hot alike) unmeasured.
        let freshUpstream = 0;
        for (let r = -WARM_UP_ROUNDS; r < opts.rounds; r++) {
          const expiredKey = `expiry-${r}`;
          const freshKey = `expiry-${r}-fresh`;
          const counter = counterKey(ctx, 'expiry', `${name}:${expiredKey}:expired`);
          const freshCounter = counterKey(ctx, 'expiry', `${name}:${freshKey}:fresh`);
          await fill(workers, expiredKey, counterKey(ctx, 'expiry', `${name}:${expiredKey}:fill`), opts.upstreamMs);
          const storedAt = nowMs();
          // The fresh key is stored later, so that at the burst (just past the expired key's fresh time) it is
          // well inside its own; the workers idle a few hundred ms before the burst either way.
          await sleep(opts.freshMs * 0.6);
          await fill(workers, freshKey, counterKey(ctx, 'expiry', `${name}:${freshKey}:fill`), opts.upstreamMs);
          await sleep(Math.max(0, storedAt + opts.freshMs + 300 - nowMs()));
          // Rounds alternate which key's caller each process launches first.
          const keys = [
            { key: expiredKey, counter },
            { key: freshKey, counter: freshCounter },
          ];
          const calls = await burst(workers, r % 2 === 0 ? keys : keys.reverse(), opts.callersPerProcess, opts.upstreamMs);
          // Refreshes run in the background: count them once they are done.
          await sleep(opts.upstreamMs + 500);
          if (r < 0) continue;
          perRound.push(await count(counter));
          freshUpstream += await count(freshCounter);
          for (const c of calls) {
            if (c.key === freshKey) {
              fresh.push(c.endMs - c.startMs);
              continue;
            }
            expired.push(c.endMs - c.startMs);
            roles[c.role] = (roles[c.role] ?? 0) + 1;
            if (c.error) errors.set(c.error, (errors.get(c.error) ?? 0) + 1);
          }
        }
        await Promise.all(workers.map((w) => w.call('teardown')));
        const f = summarize(fresh);
        const e = summarize(expired);
        rows.push({
          scenario: 'expiry',
          contender: name,
          upstreamCalls: Math.max(...perRound),
          upstreamCallsPerRound: perRound,
          freshUpstreamCalls: freshUpstream,
          p50Ms: e.p50Ms,
          p99Ms: e.p99Ms,
          maxMs: e.maxMs,
          freshP50Ms: f.p50Ms,
          freshP99Ms: f.p99Ms,
          overFreshP99Ms: round(e.p99Ms === null || f.p99Ms === null ? null : e.p99Ms - f.p99Ms),
          upstreamMs: opts.upstreamMs,
          callers: opts.processes * opts.callersPerProcess,
          rounds: opts.rounds,
          errors: [...errors.values()].reduce((a, b) => a + b, 0),
          errorSamples: [...errors.keys()].slice(0, 3),
          roles,
        });
        ctx.log(`expiry ${name}: upstream ${perRound.join('/')} p99 ${e.p99Ms} ms (fresh ${f.p99Ms} ms) (${Math.round(nowMs() - t0)} ms)`);
      });
    }
  } finally {
    await stopWorkers(workers).catch(() => {});
  }
  return rows;
}
