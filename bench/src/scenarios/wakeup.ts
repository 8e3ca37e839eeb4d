/**
 * Scenario 2 — follower wake-up: one owner process and two follower processes; for each flight the
 * owner starts, followers join 5 ms later, the upstream takes 20 ms. A sample is the time from the
 * owner's completion (its result stored and published: `complete` returned) to a follower's return,
 * both read from the machine's monotonic clock.
 */
import { Redis } from 'ioredis';
import { counterKey, guarded, infoField, prefixOf, type BenchContext, type ResultRow } from '../context.js';
import { FLIGHT_CONTENDERS, type ContenderName } from '../contenders/index.js';
import type { BatchResult } from '../tasks.js';
import { nowMs, sleep, summarize } from '../stats.js';
import { HOP_ACROSS_CONTENDER } from '../targets.js';

/**
 * The bare notification hop in the same run, as a floor for the figures above: the time from the
 * writer sending PUBLISH (or XADD) to the message reaching another connection (a SUBSCRIBE, or a
 * blocked XREAD), two ioredis connections in the harness process.
 */
async function rawHop(ctx: BenchContext, kind: 'pubsub' | 'xadd-xread', n: number): Promise<ResultRow> {
  const writer = new Redis(ctx.redis.url);
  const reader = new Redis(ctx.redis.url);
  const name = `fb:${ctx.runId}:hop:${kind}`;
  const samples: number[] = [];
  const fromSend: number[] = [];
  try {
    let arrived: ((at: number) => void) | undefined;
    if (kind === 'pubsub') {
      await reader.subscribe(name);
      reader.on('message', () => arrived?.(nowMs()));
    }
    let lastId = '0-0';
    for (let i = 0; i < n + 5; i++) {
      const got = new Promise<number | null>((resolve) => {
        arrived = resolve;
        setTimeout(() => resolve(null), 2000).unref();
      });
      if (kind === 'xadd-xread') {
        void reader.xread('BLOCK', 2000, 'STREAMS', name, lastId).then(
          () => arrived?.(nowMs()),
          () => arrived?.(null as unknown as number),
        );
        // Wait until the XREAD is really blocked, so the sample is a wake-up, not an immediate read.
        for (let spin = 0; spin < 200 && (await infoField(ctx.admin, 'clients', 'blocked_clients')) < 1; spin++) await sleep(1);
      }
      const sent = nowMs();
      if (kind === 'pubsub') await writer.publish(name, 'x');
      else lastId = (await writer.xadd(name, 'MAXLEN', '10', '*', 'f', 'x')) ?? lastId;
      const replied = nowMs();
      const at = await got;
      if (i >= 5 && at !== null) {
        samples.push(at - replied);
        fromSend.push(at - sent);
      }
      await sleep(1);
    }
  } finally {
    reader.disconnect();
    writer.disconnect();
    await ctx.admin.unlink(name);
  }
  return hopRow(
    kind === 'pubsub' ? 'raw PUBLISH→SUBSCRIBE hop' : 'raw XADD→XREAD hop',
    fromSend,
    samples,
    "writer's send -> reader's message, two connections of the harness process (context: the receiver is awake already)",
  );
}

/** A hop's row: latencies from the writer's send (the figures) and from its reply (`fromReplyP50Ms`). */
function hopRow(contender: string, fromSend: number[], fromReply: number[], note: string): ResultRow {
  const s = summarize(fromSend);
  return {
    scenario: 'wakeup',
    contender,
    upstreamCalls: null,
    flights: null,
    samples: s.count,
    p50Ms: s.p50Ms,
    p99Ms: s.p99Ms,
    maxMs: s.maxMs,
    fromReplyP50Ms: summarize(fromReply).p50Ms,
    note,
  };
}

/**
 * The same bare PUBLISH→SUBSCRIBE hop to another process (a worker's plain ioredis subscriber), which is
 * what a follower's wake-up crosses: the receiver has to be woken and scheduled. The wake-up target's
 * reference (the in-process hop above is context).
 */
async function rawHopAcross(ctx: BenchContext, worker: BenchContext['workers'][number], n: number): Promise<ResultRow> {
  const writer = new Redis(ctx.redis.url);
  const channel = `fb:${ctx.runId}:hop:across`;
  const sent = new Map<number, number>();
  const replied = new Map<number, number>();
  try {
    await worker.call('hopListen', { url: ctx.redis.url, channel });
    for (let i = 0; i < n + 5; i++) {
      sent.set(i, nowMs());
      await writer.publish(channel, String(i));
      replied.set(i, nowMs());
      await sleep(5);
    }
    await sleep(50);
  } finally {
    writer.disconnect();
  }
  const arrivals = (await worker.call('hopCollect')) as [number, number][];
  const fromSend: number[] = [];
  const fromReply: number[] = [];
  for (const [i, at] of arrivals) {
    if (i < 5) continue;
    fromSend.push(at - sent.get(i)!);
    fromReply.push(at - replied.get(i)!);
  }
  return hopRow(
    HOP_ACROSS_CONTENDER,
    fromSend,
    fromReply,
    "writer's send -> a worker process's message (the hop a follower's wake-up crosses: the wake-up target's reference)",
  );
}

export interface WakeupOptions {
  flights: number;
  /** Fewer for redlock: each of its followers sleeps in lock retries of 200-400 ms. */
  redlockFlights: number;
  followersPerProcess: number;
  upstreamMs: number;
}

export function wakeupOptions(quick: boolean): WakeupOptions {
  return { flights: quick ? 40 : 150, redlockFlights: quick ? 4 : 12, followersPerProcess: 5, upstreamMs: 20 };
}

/** Only contenders whose followers wait for another process's owner. */
export const WAKEUP_CONTENDERS: readonly ContenderName[] = ['redlock', ...FLIGHT_CONTENDERS];

export async function runWakeup(ctx: BenchContext, contenders: ContenderName[], opts: WakeupOptions): Promise<ResultRow[]> {
  const rows: ResultRow[] = [];
  const [owner, ...followers] = ctx.workers.slice(0, 3);
  if (!owner || followers.length < 2) throw new Error('wake-up needs 3 workers');
  for (const name of contenders.filter((c) => WAKEUP_CONTENDERS.includes(c))) {
    await guarded(ctx, rows, 'wakeup', name, async () => {
      const t0 = nowMs();
      const prefix = prefixOf(ctx, 'wakeup', name);
      const all = [owner, ...followers];
      await Promise.all(
        all.map((w) =>
          w.call('setup', { name, options: { redisUrl: ctx.redis.url, prefix, resultTtlMs: 60_000, recordCompletions: true } }),
        ),
      );
      const run = async (tag: string, flights: number) => {
        const keys = Array.from({ length: flights }, (_, i) => `${tag}-${i}`);
        const ck = counterKey(ctx, 'wakeup', `${name}:${tag}`);
        const slotMs = name === 'redlock' ? 900 : opts.upstreamMs + 40;
        const startAtMs = nowMs() + 50;
        const upstream = { delayMs: opts.upstreamMs, payloadBytes: 1024, counterKey: ck };
        const results: BatchResult[] = await Promise.all([
          owner.call('series', { keys, callers: 1, startAtMs, slotMs, offsetMs: 0, upstream }),
          ...followers.map((w) => w.call('series', { keys, callers: opts.followersPerProcess, startAtMs, slotMs, offsetMs: 5, upstream })),
        ]);
        return { results, upstream: Number((await ctx.admin.get(ck)) ?? 0) };
      };
      await run('warm-up', 2);
      const flights = name === 'redlock' ? opts.redlockFlights : opts.flights;
      const { results, upstream } = await run('flight', flights);
      await Promise.all(all.map((w) => w.call('teardown')));

      const completion = new Map<string, number>();
      for (const r of results) for (const [k, at] of r.completions) completion.set(k, at);
      const samples: number[] = [];
      const roles: Record<string, number> = {};
      const woken: Record<string, number> = {};
      let errors = 0;
      for (const r of results.slice(1)) {
        for (const [k, v] of Object.entries(r.woken)) woken[k] = (woken[k] ?? 0) + v;
        for (const c of r.calls) {
          roles[c.role] = (roles[c.role] ?? 0) + 1;
          if (c.error) errors++;
          const done = completion.get(c.key);
          if (c.role !== 'owner' && !c.error && done !== undefined) samples.push(c.endMs - done);
        }
      }
      const s = summarize(samples);
      rows.push({
        scenario: 'wakeup',
        contender: name,
        upstreamCalls: upstream,
        flights,
        p50Ms: s.p50Ms,
        p99Ms: s.p99Ms,
        maxMs: s.maxMs,
        samples: s.count,
        roles,
        woken,
        errors,
      });
      ctx.log(`wakeup ${name}: p50 ${s.p50Ms} p99 ${s.p99Ms} ms over ${s.count} followers (${Math.round(nowMs() - t0)} ms)`);
    });
  }
  const hops = ctx.quick ? 100 : 300;
  rows.push(await rawHop(ctx, 'pubsub', hops), await rawHopAcross(ctx, followers[0]!, hops), await rawHop(ctx, 'xadd-xread', hops));
  return rows;
}
