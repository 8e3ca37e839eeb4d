import type { Redis } from 'ioredis';
import type { ContenderName } from './contenders/index.js';
import type { Worker } from './pool.js';
import type { BenchRedis } from './redis-server.js';

/** One row of bench/results/latest.json. */
export interface ResultRow {
  scenario: string;
  contender: string;
  upstreamCalls: number | null;
  p50Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
  opsPerSec?: number | null;
  roundTrips?: number | null;
  connections?: number | null;
  bytesPerFlight?: number | null;
  leftoverKeys?: number | null;
  [extra: string]: unknown;
}

export interface BenchContext {
  quick: boolean;
  redis: BenchRedis;
  /** The harness's own connection (INFO, counters, cleanup). */
  admin: Redis;
  runId: string;
  workers: Worker[];
  contenders: ContenderName[];
  log: (message: string) => void;
}

/** Key prefix of one contender in one scenario; everything under `fb:<runId>:` is removed at the end. */
export function prefixOf(ctx: BenchContext, scenario: string, contender: string): string {
  return `fb:${ctx.runId}:${scenario}:${contender}:`;
}

export function counterKey(ctx: BenchContext, scenario: string, name: string): string {
  return `fb:${ctx.runId}:counter:${scenario}:${name}`;
}

/** Deletes every key matching `pattern`; returns how many. */
export async function deleteKeys(admin: Redis, pattern: string): Promise<number> {
  let cursor = '0';
  let n = 0;
  do {
    const [next, keys] = await admin.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    if (keys.length) n += await admin.unlink(...keys);
  } while (cursor !== '0');
  return n;
}

export async function scanKeys(admin: Redis, pattern: string): Promise<string[]> {
  let cursor = '0';
  const out: string[] = [];
  do {
    const [next, keys] = await admin.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    out.push(...keys);
  } while (cursor !== '0');
  return out;
}

export async function infoField(admin: Redis, section: string, field: string): Promise<number> {
  const text = await admin.info(section);
  const m = new RegExp(`^${field}:(\\S+)`, 'm').exec(text);
  return m ? Number(m[1]) : NaN;
}

/** The row of a contender whose part of a scenario threw: the run goes on and reports why. */
export function failedRow(scenario: string, contender: string, error: unknown): ResultRow {
  return {
    scenario,
    contender,
    kind: 'failed',
    reason: error instanceof Error ? error.message.split('\n')[0]! : String(error),
    upstreamCalls: null,
    p50Ms: null,
    p99Ms: null,
    maxMs: null,
  };
}

/**
 * Runs one contender's part of a scenario. A throw becomes a `failed` row in `rows` and the workers
 * drop whatever they had set up, so the next contender starts clean. Returns false when it threw.
 */
export async function guarded(
  ctx: BenchContext,
  rows: ResultRow[],
  scenario: string,
  contender: string,
  run: () => Promise<void>,
): Promise<boolean> {
  try {
    await run();
    return true;
  } catch (error) {
    const row = failedRow(scenario, contender, error);
    rows.push(row);
    ctx.log(`${scenario} ${contender} FAILED: ${String(row.reason)}`);
    await Promise.all(ctx.workers.map((w) => w.call('teardown').catch(() => {})));
    return false;
  }
}
