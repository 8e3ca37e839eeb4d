import { setTimeout as sleep } from 'node:timers/promises';

/** Latency statistics (milliseconds). */
export interface Summary {
  count: number;
  p50Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
  meanMs: number | null;
}

/** Nearest-rank percentile of a sorted array. */
export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))] ?? null;
}

/** The median of `values` (the mean of the middle two for an even count: 2 rounds give their mean). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const mean = sorted.length ? sorted.reduce((s, x) => s + x, 0) / sorted.length : null;
  return {
    count: sorted.length,
    p50Ms: round(percentile(sorted, 50)),
    p99Ms: round(percentile(sorted, 99)),
    maxMs: round(sorted.length ? sorted[sorted.length - 1]! : null),
    meanMs: round(mean),
  };
}

export function round(value: number | null | undefined, digits = 3): number | null {
  if (value === null || value === undefined || !Number.isFinite(value)) return null;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** Monotonic time in nanoseconds, comparable across processes on one Linux machine (CLOCK_MONOTONIC). */
export const nowNs = (): bigint => process.hrtime.bigint();
/** Monotonic milliseconds (float), comparable across processes on one machine. */
export const nowMs = (): number => Number(process.hrtime.bigint()) / 1e6;

export { sleep };

/** Waits until the shared monotonic clock reaches `atMs` (sleeps, then spins the last 2 ms). */
export async function waitUntil(atMs: number): Promise<void> {
  const coarse = atMs - nowMs() - 2;
  if (coarse > 0) await sleep(coarse);
  while (nowMs() < atMs) await new Promise((resolve) => setImmediate(resolve));
}

/** The order of round `r` of interleaved rounds: the contenders rotated by `r`, so no contender always runs right after the same one. */
export function roundOrder<T>(contenders: readonly T[], r: number): T[] {
  return contenders.map((_, i) => contenders[(i + r) % contenders.length]!);
}
