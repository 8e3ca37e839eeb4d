/**
 * Scenario 5 — footprint: Redis memory per completed flight, for 1 KB and 100 KB JSON results — the
 * `MEMORY USAGE` of the keys the flights leave (summed, per flight; the `used_memory` delta of the window
 * beside it as context) — and the keys left once the result TTL has passed (short TTL; must be 0).
 */
import { deleteKeys, guarded, infoField, prefixOf, scanKeys, type BenchContext, type ResultRow } from '../context.js';
import { createContender, REDIS_CONTENDERS, type ContenderName } from '../contenders/index.js';
import { nowMs, round, sleep } from '../stats.js';
import { makeUpstream } from '../upstream.js';

export interface FootprintOptions {
  sizes: { bytes: number; flights: number }[];
  leftoverFlights: number;
  shortTtlMs: number;
}

export function footprintOptions(quick: boolean): FootprintOptions {
  return {
    sizes: [
      { bytes: 1024, flights: quick ? 200 : 1000 },
      { bytes: 100 * 1024, flights: quick ? 20 : 100 },
    ],
    leftoverFlights: quick ? 20 : 100,
    shortTtlMs: 1000,
  };
}

async function runFlights(run: (key: string, s: () => Promise<unknown>) => Promise<unknown>, tag: string, n: number, bytes: number) {
  const upstream = makeUpstream({ delayMs: 0, payloadBytes: bytes });
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < n) await run(`${tag}-${next++}`, upstream.supplier);
    }),
  );
}

/**
 * `used_memory` less the clients' buffers (a 100 KB result passes through a connection's query buffer), once
 * no freed object is pending. Context only: other scenarios' keys expire and `UNLINK`ed values are freed in
 * the background while a window runs, which has made a window's delta negative.
 */
async function usedMemory(ctx: BenchContext): Promise<number> {
  for (let i = 0; i < 200 && (await infoField(ctx.admin, 'memory', 'lazyfree_pending_objects')) > 0; i++) await sleep(10);
  return (await infoField(ctx.admin, 'memory', 'used_memory')) - (await infoField(ctx.admin, 'memory', 'mem_clients_normal'));
}

/** MEMORY USAGE of the keys summed by Redis type, per flight (how a flight's bytes split across its keys). */
async function bytesByType(ctx: BenchContext, keys: string[], flights: number): Promise<Record<string, number>> {
  const sums: Record<string, number> = {};
  for (let i = 0; i < keys.length; i += 500) {
    const batch = keys.slice(i, i + 500);
    const p = ctx.admin.pipeline();
    for (const k of batch) {
      p.type(k);
      p.call('MEMORY', 'USAGE', k, 'SAMPLES', '0');
    }
    const replies = (await p.exec()) ?? [];
    for (let j = 0; j < batch.length; j++) {
      const type = String(replies[2 * j]?.[1] ?? 'none');
      sums[type] = (sums[type] ?? 0) + Number(replies[2 * j + 1]?.[1] ?? 0);
    }
  }
  return Object.fromEntries(Object.entries(sums).map(([t, b]) => [t, Math.round(b / Math.max(1, flights))]));
}

/** Flights of the warm-up before each measured window (their keys are under the same prefix). */
const WARM_FLIGHTS = 2;

export async function runFootprint(ctx: BenchContext, contenders: ContenderName[], opts: FootprintOptions): Promise<ResultRow[]> {
  const rows: ResultRow[] = [];
  const redisOnes = contenders.filter((c) => REDIS_CONTENDERS.includes(c));
  /** Contenders whose part threw: reported once as a failed row, left out of the rest. */
  const failedNames = new Set<string>();
  const memory: Record<
    string,
    { bytesPerFlight: number; usedMemoryPerFlight: number; keysPerFlight: number | null; byType: Record<string, number> }[]
  > = {};
  for (const name of redisOnes) {
    const ok = await guarded(ctx, rows, 'footprint', name, async () => {
      memory[name] = [];
      for (const size of opts.sizes) {
        const prefix = `${prefixOf(ctx, 'footprint', name)}${size.bytes}:`;
        const contender = await createContender(name, { redisUrl: ctx.redis.url, prefix, resultTtlMs: 600_000 });
        try {
          await runFlights((k, s) => contender.run(k, s), 'warm', WARM_FLIGHTS, size.bytes);
          await sleep(50);
          const keysBefore = (await scanKeys(ctx.admin, `${prefix}*`)).length;
          const before = await usedMemory(ctx);
          await runFlights((k, s) => contender.run(k, s), 'f', size.flights, size.bytes);
          await sleep(50);
          const after = await usedMemory(ctx);
          const keys = await scanKeys(ctx.admin, `${prefix}*`);
          // Every key under the prefix belongs to one of the warm-up or measured flights, kept for the result TTL.
          const byType = await bytesByType(ctx, keys, size.flights + WARM_FLIGHTS);
          memory[name]!.push({
            bytesPerFlight: Object.values(byType).reduce((a, b) => a + b, 0),
            usedMemoryPerFlight: Math.round((after - before) / size.flights),
            keysPerFlight: round((keys.length - keysBefore) / size.flights, 2),
            byType,
          });
        } finally {
          await contender.close();
          await deleteKeys(ctx.admin, `${prefix}*`);
        }
      }
    });
    if (!ok) failedNames.add(name);
  }

  // Keys left after the result TTL: every contender runs flights with a short TTL, then one wait.
  const leftover: Record<string, { keys: number; withoutTtl: number; samples: string[]; maxPttlMs: number }> = {};
  for (const name of redisOnes.filter((n) => !failedNames.has(n))) {
    const ok = await guarded(ctx, rows, 'footprint', name, async () => {
      const prefix = `${prefixOf(ctx, 'footprint', name)}ttl:`;
      const contender = await createContender(name, { redisUrl: ctx.redis.url, prefix, resultTtlMs: opts.shortTtlMs });
      try {
        await runFlights((k, s) => contender.run(k, s), 'f', opts.leftoverFlights, 1024);
      } finally {
        await contender.close();
      }
    });
    if (!ok) failedNames.add(name);
  }
  const finishedAt = nowMs();
  await sleep(Math.max(0, opts.shortTtlMs + 500 - (nowMs() - finishedAt)));
  const measured = redisOnes.filter((n) => !failedNames.has(n));
  for (const name of measured) {
    const prefix = `${prefixOf(ctx, 'footprint', name)}ttl:`;
    const keys = await scanKeys(ctx.admin, `${prefix}*`);
    const info = { keys: 0, withoutTtl: 0, samples: [] as string[], maxPttlMs: 0 };
    for (const key of keys) {
      const pttl = await ctx.admin.pttl(key); // also expires the key if it is past its TTL
      if (pttl === -2) continue;
      info.keys++;
      if (pttl === -1) info.withoutTtl++;
      info.maxPttlMs = Math.max(info.maxPttlMs, pttl);
      if (info.samples.length < 3) info.samples.push(`${key.slice(prefix.length)} (pttl ${pttl})`);
    }
    leftover[name] = info;
    await deleteKeys(ctx.admin, `${prefix}*`);
  }

  for (const name of measured) {
    opts.sizes.forEach((size, i) => {
      const m = memory[name]![i]!;
      const l = leftover[name]!;
      rows.push({
        scenario: 'footprint',
        contender: name,
        resultBytes: size.bytes,
        flights: size.flights,
        upstreamCalls: null,
        p50Ms: null,
        p99Ms: null,
        maxMs: null,
        bytesPerFlight: m.bytesPerFlight,
        usedMemoryPerFlight: m.usedMemoryPerFlight,
        keysPerFlight: m.keysPerFlight,
        memoryUsageByType: m.byType,
        leftoverKeys: l.keys,
        leftoverWithoutTtl: l.withoutTtl,
        leftoverSamples: l.samples,
        resultTtlMs: opts.shortTtlMs,
      });
    });
    ctx.log(`footprint ${name}: ${memory[name]!.map((m) => m.bytesPerFlight).join(' / ')} B per flight, leftover ${leftover[name]!.keys}`);
  }
  return rows;
}
