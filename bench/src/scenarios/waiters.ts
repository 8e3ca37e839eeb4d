/**
 * Scenario 4 — many waiters: one process holds 1,000 owners open; another process parks 10,000
 * callers on those 1,000 keys. Reported: Redis connections the waiting process holds at the peak
 * (connected_clients delta, sampled every 20 ms) and opens in total (total_connections_received
 * delta), its memory while everyone waits (after a GC, delta from before the callers), and how fast
 * the waiters return once the 1,000 owners are released (their upstream calls return).
 */
import { counterKey, guarded, infoField, prefixOf, type BenchContext, type ResultRow } from '../context.js';
import { REDIS_CONTENDERS, type ContenderName } from '../contenders/index.js';
import type { BatchResult, MemorySample } from '../tasks.js';
import { nowMs, round, sleep, summarize } from '../stats.js';

export interface WaitersOptions {
  keys: number;
  perKey: number;
  settleMs: number;
}

export function waitersOptions(quick: boolean): WaitersOptions {
  return { keys: 1000, perKey: 10, settleMs: quick ? 400 : 800 };
}

export async function runWaiters(ctx: BenchContext, contenders: ContenderName[], opts: WaitersOptions): Promise<ResultRow[]> {
  const rows: ResultRow[] = [];
  const [ownerW, waiterW] = ctx.workers;
  if (!ownerW || !waiterW) throw new Error('many-waiters needs 2 workers');
  for (const name of contenders.filter((c) => REDIS_CONTENDERS.includes(c))) {
    await guarded(ctx, rows, 'many-waiters', name, async () => {
      const t0 = nowMs();
      const prefix = prefixOf(ctx, 'waiters', name);
      const options = { redisUrl: ctx.redis.url, prefix, resultTtlMs: 60_000 };
      const keys = Array.from({ length: opts.keys }, (_, i) => `w-${i}`);
      const ck = counterKey(ctx, 'waiters', name);
      const upstream = { delayMs: 0, payloadBytes: 1024, counterKey: ck };
      await ownerW.call('setup', { name, options });
      const owned = await ownerW.call<number>('holdStart', { keys, upstream, timeoutMs: 15_000 });
      await sleep(50);
      const baseClients = await infoField(ctx.admin, 'clients', 'connected_clients');
      const baseOpened = await infoField(ctx.admin, 'stats', 'total_connections_received');
      let peak = baseClients;
      let polling = true;
      const poller = (async () => {
        while (polling) {
          peak = Math.max(peak, await infoField(ctx.admin, 'clients', 'connected_clients'));
          await sleep(20);
        }
      })();
      let mem: { before: MemorySample; during: MemorySample } | undefined;
      let ownerResult: BatchResult | undefined;
      let waiterResult: (BatchResult & { after: MemorySample }) | undefined;
      try {
        await waiterW.call('setup', { name, options });
        mem = await waiterW.call('waitersStart', { keys, perKey: opts.perKey, upstream, settleMs: opts.settleMs });
        const during = await infoField(ctx.admin, 'clients', 'connected_clients');
        peak = Math.max(peak, during);
        [ownerResult, waiterResult] = await Promise.all([ownerW.call<BatchResult>('holdRelease'), waiterW.call('waitersFinish')]);
      } finally {
        polling = false;
        await poller;
      }
      const opened = (await infoField(ctx.admin, 'stats', 'total_connections_received')) - baseOpened;
      await Promise.all([ownerW.call('teardown'), waiterW.call('teardown')]);

      const releasedAt = ownerResult!.releasedAtMs!;
      const wake: number[] = [];
      const roles: Record<string, number> = {};
      const errors = new Map<string, number>();
      for (const c of waiterResult!.calls) {
        roles[c.role] = (roles[c.role] ?? 0) + 1;
        if (c.error) errors.set(c.error, (errors.get(c.error) ?? 0) + 1);
        // Only callers that were still waiting at the release (bentocache's ran the upstream themselves before it).
        if (!c.error && c.endMs >= releasedAt) wake.push(c.endMs - releasedAt);
      }
      const s = summarize(wake);
      const upstreamCalls = Number((await ctx.admin.get(ck)) ?? 0);
      rows.push({
        scenario: 'many-waiters',
        contender: name,
        upstreamCalls,
        ownersHeld: owned,
        waiters: opts.keys * opts.perKey,
        keys: opts.keys,
        p50Ms: s.p50Ms,
        p99Ms: s.p99Ms,
        maxMs: s.maxMs,
        latencyNote: 'owners released (their upstream returns) -> waiter return, callers still waiting at the release only',
        waitedForRelease: wake.length,
        connections: peak - baseClients,
        connectionsOpened: opened,
        rssDeltaMB: round(mem!.during.rssMB - mem!.before.rssMB, 1),
        heapDeltaMB: round(mem!.during.heapUsedMB - mem!.before.heapUsedMB, 1),
        rssMB: round(mem!.during.rssMB, 1),
        errors: [...errors.values()].reduce((a, b) => a + b, 0),
        errorSamples: [...errors.keys()].slice(0, 3),
        roles,
      });
      ctx.log(
        `many-waiters ${name}: +${peak - baseClients} connections, +${round(mem!.during.heapUsedMB - mem!.before.heapUsedMB, 1)} MB heap (${Math.round(nowMs() - t0)} ms)`,
      );
    });
  }
  return rows;
}
