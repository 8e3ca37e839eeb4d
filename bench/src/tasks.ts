/**
 * Work done by one process with one contender; run inside the worker processes (and in-process
 * by the scenarios that need a single process).
 */
import type { Redis } from 'ioredis';
import type { Contender } from './contenders/index.js';
import { nowMs, sleep, waitUntil } from './stats.js';
import { makeUpstream, type UpstreamSpec } from './upstream.js';

export interface CallRecord {
  key: string;
  /** Call start and return on the shared monotonic clock (ms). */
  startMs: number;
  endMs: number;
  role: string;
  error?: string;
}

export interface BatchResult {
  calls: CallRecord[];
  /** [key, ms] when this process published a result as the owner. */
  completions: [string, number][];
  upstreamCalls: number;
  woken: Record<string, number>;
  /** When the held owners were released (hold only). */
  releasedAtMs?: number;
}

async function timedCall(contender: Contender, key: string, supplier: () => Promise<unknown>): Promise<CallRecord> {
  const startMs = nowMs();
  try {
    const r = await contender.run(key, supplier);
    return { key, startMs, endMs: nowMs(), role: r.role };
  } catch (error) {
    return { key, startMs, endMs: nowMs(), role: 'error', error: `${(error as Error).name}: ${(error as Error).message}` };
  }
}

function collect(contender: Contender, calls: CallRecord[], upstreamCalls: number, keys?: Set<string>): BatchResult {
  const completions = [...contender.completions.entries()].filter(([k]) => !keys || keys.has(k));
  for (const [k] of completions) contender.completions.delete(k);
  const woken = { ...contender.woken };
  for (const k of Object.keys(contender.woken)) delete contender.woken[k];
  return { calls, completions, upstreamCalls, woken };
}

/** `callers` concurrent calls on one key, all started at `startAtMs`. */
export function herd(
  contender: Contender,
  counter: Redis | undefined,
  args: { key: string; callers: number; startAtMs: number; upstream: UpstreamSpec },
): Promise<BatchResult> {
  return herds(contender, counter, {
    bursts: [{ key: args.key, upstream: args.upstream }],
    callers: args.callers,
    startAtMs: args.startAtMs,
  });
}

/**
 * `callers` concurrent calls on each burst's key, all started at `startAtMs` and launched in turn (one call per
 * key at a time), so the keys' callers share the process alike and none go first; each burst's upstream has its own counter.
 */
export async function herds(
  contender: Contender,
  counter: Redis | undefined,
  args: { bursts: { key: string; upstream: UpstreamSpec }[]; callers: number; startAtMs: number },
): Promise<BatchResult> {
  const upstreams = args.bursts.map((b) => makeUpstream(b.upstream, counter));
  await waitUntil(args.startAtMs);
  const pending: Promise<CallRecord>[] = [];
  for (let i = 0; i < args.callers; i++) args.bursts.forEach((b, k) => pending.push(timedCall(contender, b.key, upstreams[k]!.supplier)));
  const calls = await Promise.all(pending);
  const upstreamCalls = upstreams.reduce((sum, u) => sum + u.calls(), 0);
  return collect(contender, calls, upstreamCalls, new Set(args.bursts.map((b) => b.key)));
}

/** One flight per slot: at `startAtMs + i * slotMs + offsetMs`, `callers` calls on `keys[i]`. */
export async function series(
  contender: Contender,
  counter: Redis | undefined,
  args: { keys: string[]; callers: number; startAtMs: number; slotMs: number; offsetMs: number; upstream: UpstreamSpec },
): Promise<BatchResult> {
  const upstream = makeUpstream(args.upstream, counter);
  const pending: Promise<CallRecord>[] = [];
  for (let i = 0; i < args.keys.length; i++) {
    await waitUntil(args.startAtMs + i * args.slotMs + args.offsetMs);
    for (let c = 0; c < args.callers; c++) pending.push(timedCall(contender, args.keys[i]!, upstream.supplier));
  }
  const calls = await Promise.all(pending);
  return collect(contender, calls, upstream.calls(), new Set(args.keys));
}

/** Owners held open until `release()`: one call per key whose upstream waits for the gate. */
export function hold(contender: Contender, counter: Redis | undefined, args: { keys: string[]; upstream: UpstreamSpec }) {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const upstream = makeUpstream(args.upstream, counter, gate);
  const pending = Promise.all(args.keys.map((key) => timedCall(contender, key, upstream.supplier)));
  return {
    /** Resolves when every owner's upstream call has started (or after `timeoutMs`). */
    async started(timeoutMs: number): Promise<number> {
      const end = nowMs() + timeoutMs;
      while (upstream.calls() < args.keys.length && nowMs() < end) await sleep(5);
      return upstream.calls();
    },
    async release(): Promise<BatchResult> {
      const releasedAtMs = nowMs();
      open();
      const calls = await pending;
      return { ...collect(contender, calls, upstream.calls(), new Set(args.keys)), releasedAtMs };
    },
  };
}

export interface MemorySample {
  rssMB: number;
  heapUsedMB: number;
}

export function memory(): MemorySample {
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  return { rssMB: m.rss / 2 ** 20, heapUsedMB: m.heapUsed / 2 ** 20 };
}

/** `perKey` waiters on each key, started together; `waiting()` samples memory once they are all parked. */
export function waiters(
  contender: Contender,
  counter: Redis | undefined,
  args: { keys: string[]; perKey: number; upstream: UpstreamSpec },
) {
  const upstream = makeUpstream(args.upstream, counter);
  const before = memory();
  const pending: Promise<CallRecord>[] = [];
  for (const key of args.keys) for (let i = 0; i < args.perKey; i++) pending.push(timedCall(contender, key, upstream.supplier));
  const all = Promise.all(pending);
  return {
    before,
    async waiting(settleMs: number): Promise<MemorySample> {
      await sleep(settleMs);
      return memory();
    },
    async finish(): Promise<BatchResult> {
      const calls = await all;
      return collect(contender, calls, upstream.calls(), new Set(args.keys));
    },
  };
}

/** One caller on each of this process's own keys, for the fan-out scenario. */
export function ownWaiters(contender: Contender, args: { keys: string[] }) {
  const upstream = makeUpstream({ delayMs: 0, payloadBytes: 1024 });
  const pending = Promise.all(args.keys.map((key) => timedCall(contender, key, upstream.supplier)));
  return {
    /** Resolves once every caller is parked as a follower (or after `timeoutMs`); returns how many are. */
    async parked(timeoutMs: number): Promise<number | null> {
      if (!contender.waiting) {
        await sleep(timeoutMs);
        return null;
      }
      const end = nowMs() + timeoutMs;
      while (contender.waiting() < args.keys.length && nowMs() < end) await sleep(5);
      return contender.waiting();
    },
    async finish(): Promise<BatchResult> {
      return collect(contender, await pending, upstream.calls(), new Set(args.keys));
    },
  };
}
