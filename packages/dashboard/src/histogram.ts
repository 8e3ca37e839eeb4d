/**
 * A small latency histogram with logarithmic buckets: each bucket is 25 % wider than the one before, so a
 * quantile is known within 25 % whatever the scale (0.1 ms to hours), in a fixed 100 numbers per series.
 */
const GROWTH = 1.25;
const SMALLEST_MS = 0.1;
const BUCKETS = 100;
const LOG_GROWTH = Math.log(GROWTH);

/** The upper bound (ms) of bucket `index`. */
const upperBound = (index: number): number => SMALLEST_MS * GROWTH ** index;

export class LatencyHistogram {
  private readonly counts = new Uint32Array(BUCKETS);
  private total = 0;
  private sumMs = 0;
  private maxMs = 0;

  record(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) return;
    const index = ms <= SMALLEST_MS ? 0 : Math.min(BUCKETS - 1, Math.ceil(Math.log(ms / SMALLEST_MS) / LOG_GROWTH));
    this.counts[index]!++;
    this.total++;
    this.sumMs += ms;
    if (ms > this.maxMs) this.maxMs = ms;
  }

  get count(): number {
    return this.total;
  }

  /** The value (ms) at quantile `q` (0..1): its bucket's upper bound, never above the largest recorded. */
  quantile(q: number): number | null {
    if (this.total === 0) return null;
    const rank = Math.max(1, Math.ceil(q * this.total));
    let seen = 0;
    for (let index = 0; index < BUCKETS; index++) {
      seen += this.counts[index]!;
      if (seen >= rank) return Math.min(upperBound(index), this.maxMs);
    }
    return this.maxMs;
  }

  summary(): DurationSummary | null {
    if (this.total === 0) return null;
    return {
      count: this.total,
      meanMs: this.sumMs / this.total,
      p50Ms: this.quantile(0.5)!,
      p95Ms: this.quantile(0.95)!,
      p99Ms: this.quantile(0.99)!,
      maxMs: this.maxMs,
    };
  }
}

/** Durations of one kind in one stage, in milliseconds (quantiles within 25 %). */
export interface DurationSummary {
  count: number;
  meanMs: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
}
