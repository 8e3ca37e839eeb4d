/**
 * Scenario 3 — distinct keys: flights on distinct keys in one process (owner path, 1 KB results,
 * instant upstream), next to the raw ceiling measured in the same run (pipelined EVALSHA of a trivial
 * script); then the commands each owner flight and each follower sends, counted by a TCP proxy.
 *
 * The contenders are measured in interleaved rounds (every contender once per round, the order rotated
 * from round to round) and each figure is the median of its rounds: on a shared machine whose speed drifts
 * over tens of seconds, back-to-back windows would compare the drift as much as the contenders.
 */
import { Redis } from 'ioredis';
import { guarded, prefixOf, type BenchContext, type ResultRow } from '../context.js';
import { createContender, REDIS_CONTENDERS, type Contender, type ContenderName } from '../contenders/index.js';
import { BEHIND, startCountingProxy, SUBSCRIPTION } from '../proxy.js';
import { median, nowMs, round, roundOrder, sleep, summarize } from '../stats.js';
import { makeUpstream } from '../upstream.js';
import { startBenchValkey } from '../redis-server.js';

export interface ThroughputOptions {
  /** One measured window of one contender (there are `rounds` of them). */
  durationMs: number;
  /** Interleaved rounds: each contender is measured once per round; figures are the medians. */
  rounds: number;
  /** Warm-up per contender (JIT, script loading) before its window. */
  warmupMs: number;
  concurrency: number;
  /** Flights counted through the proxy (owner phase and follower phase). */
  countedFlights: number;
  payloadBytes: number;
}

export function throughputOptions(quick: boolean): ThroughputOptions {
  return {
    durationMs: quick ? 400 : 1000,
    // 7 one-second windows per contender: a slowdown of the machine lasting a round or two (seen here: a
    // third of the rounds at half speed) lands on some windows of every contender, and the median skips it.
    rounds: quick ? 2 : 7,
    warmupMs: quick ? 400 : 800,
    concurrency: 64,
    countedFlights: quick ? 20 : 100,
    payloadBytes: 1024,
  };
}

/** Pipelined EVALSHA of `return 1`: 4 loops × pipelines of 100, for `durationMs`. */
async function rawCeiling(
  url: string,
  durationMs: number,
  admin: Redis,
): Promise<{ ops: number; clientCpuPct: number | null; redisCpuPct: number | null; redisCpuUsPerOp: number | null }> {
  const client = new Redis(url);
  try {
    const sha = (await client.script('LOAD', 'return 1')) as string;
    const loop = async (end: number) => {
      let n = 0;
      while (nowMs() < end) {
        const p = client.pipeline();
        for (let i = 0; i < 100; i++) p.evalsha(sha, 0);
        await p.exec();
        n += 100;
      }
      return n;
    };
    await Promise.all([0, 1, 2, 3].map(() => loop(nowMs() + 150)));
    const redisBefore = await redisCpu(admin);
    const cpuBefore = process.cpuUsage();
    const start = nowMs();
    const counts = await Promise.all([0, 1, 2, 3].map(() => loop(start + durationMs)));
    const elapsed = (nowMs() - start) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const ops = counts.reduce((a, b) => a + b, 0);
    const redisSeconds = (await redisCpu(admin)) - redisBefore;
    return {
      ops: ops / elapsed,
      clientCpuPct: round((100 * (cpu.user + cpu.system)) / 1e6 / elapsed, 0),
      redisCpuPct: round((100 * redisSeconds) / elapsed, 0),
      redisCpuUsPerOp: round((redisSeconds * 1e6) / ops, 2),
    };
  } finally {
    client.disconnect();
  }
}

/** CPU seconds used by redis-server so far (main thread + others). */
export async function redisCpu(admin: Redis): Promise<number> {
  const text = await admin.info('cpu');
  const get = (f: string) => Number(new RegExp(`^${f}:(\\S+)`, 'm').exec(text)?.[1] ?? 0);
  return get('used_cpu_user') + get('used_cpu_sys');
}

async function measureOwners(contender: Contender, tag: string, opts: ThroughputOptions, durationMs: number, admin?: Redis) {
  const upstream = makeUpstream({ delayMs: 0, payloadBytes: opts.payloadBytes });
  let next = 0;
  const latencies: number[] = [];
  let errors = 0;
  const end = nowMs() + durationMs;
  const loop = async () => {
    while (nowMs() < end) {
      const key = `${tag}-${next++}`;
      const t = nowMs();
      try {
        await contender.run(key, upstream.supplier);
        latencies.push(nowMs() - t);
      } catch {
        errors++;
      }
    }
  };
  const redisBefore = admin ? await redisCpu(admin) : 0;
  const cpuBefore = process.cpuUsage();
  const start = nowMs();
  await Promise.all(Array.from({ length: opts.concurrency }, loop));
  const elapsed = (nowMs() - start) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const redisSeconds = admin ? (await redisCpu(admin)) - redisBefore : null;
  const clientSeconds = (cpu.user + cpu.system) / 1e6;
  const n = Math.max(1, latencies.length);
  return {
    ops: latencies.length / elapsed,
    latencies,
    errors,
    upstreamCalls: upstream.calls(),
    flights: next,
    clientCpuPct: round((100 * clientSeconds) / elapsed, 0),
    redisCpuPct: redisSeconds === null ? null : round((100 * redisSeconds) / elapsed, 0),
    clientCpuUsPerFlight: round((clientSeconds * 1e6) / n, 1),
    redisCpuUsPerFlight: redisSeconds === null ? null : round((redisSeconds * 1e6) / n, 1),
  };
}

interface Counted {
  /** Commands per flight that wait for their own reply: the (un)subscription and commands sent behind it excluded. */
  perFlight: number | null;
  subscriptionPerFlight: number | null;
  byCommand: Record<string, number>;
  connections: number;
  upstreamCalls: number;
}

/** Commands per owner flight: N sequential flights through the proxy. */
async function countOwner(ctx: BenchContext, name: ContenderName, opts: ThroughputOptions): Promise<Counted> {
  const target = new URL(ctx.redis.url);
  const proxy = await startCountingProxy({ host: target.hostname, port: Number(target.port) });
  const contender = await createContender(name, { redisUrl: proxy.url, prefix: prefixOf(ctx, 'rt-owner', name), resultTtlMs: 60_000 });
  try {
    const upstream = makeUpstream({ delayMs: 0, payloadBytes: opts.payloadBytes });
    for (let i = 0; i < 3; i++) await contender.run(`warm-${i}`, upstream.supplier);
    await sleep(20);
    proxy.reset();
    const before = upstream.calls();
    for (let i = 0; i < opts.countedFlights; i++) await contender.run(`k-${i}`, upstream.supplier);
    return {
      ...split(proxy.byCommand(), opts.countedFlights),
      byCommand: perFlight(proxy.byCommand(), opts.countedFlights),
      connections: proxy.connections(),
      upstreamCalls: upstream.calls() - before,
    };
  } finally {
    await contender.close();
    await proxy.close();
  }
}

/**
 * Commands per follower: an owner instance (direct) and a follower instance (through the proxy), as
 * two nodes; per key the owner starts, the follower joins 5 ms later, the upstream takes 20 ms.
 */
async function countFollower(ctx: BenchContext, name: ContenderName, opts: ThroughputOptions): Promise<Counted> {
  const target = new URL(ctx.redis.url);
  const proxy = await startCountingProxy({ host: target.hostname, port: Number(target.port) });
  const prefix = prefixOf(ctx, 'rt-follower', name);
  const owner = await createContender(name, { redisUrl: ctx.redis.url, prefix, resultTtlMs: 60_000 });
  const follower = await createContender(name, { redisUrl: proxy.url, prefix, resultTtlMs: 60_000 });
  try {
    const ownerUp = makeUpstream({ delayMs: 20, payloadBytes: opts.payloadBytes });
    const followerUp = makeUpstream({ delayMs: 20, payloadBytes: opts.payloadBytes });
    const pair = async (key: string) => {
      const a = owner.run(key, ownerUp.supplier);
      await sleep(5);
      await Promise.all([a, follower.run(key, followerUp.supplier)]);
    };
    for (let i = 0; i < 2; i++) await pair(`warm-${i}`);
    await sleep(20);
    proxy.reset();
    const before = followerUp.calls();
    const n = Math.max(10, Math.round(opts.countedFlights / 3));
    for (let i = 0; i < n; i++) await pair(`k-${i}`);
    return {
      ...split(proxy.byCommand(), n),
      byCommand: perFlight(proxy.byCommand(), n),
      connections: proxy.connections(),
      upstreamCalls: followerUp.calls() - before,
    };
  } finally {
    await follower.close();
    await owner.close();
    await proxy.close();
  }
}

function split(counts: Record<string, number>, n: number): { perFlight: number | null; subscriptionPerFlight: number | null } {
  let other = 0;
  let subscription = 0;
  for (const [name, count] of Object.entries(counts)) {
    if (SUBSCRIPTION.has(name)) subscription += count;
    else if (!name.includes(` ${BEHIND} `)) other += count;
  }
  return { perFlight: round(other / n, 2), subscriptionPerFlight: round(subscription / n, 2) };
}

function perFlight(counts: Record<string, number>, n: number): Record<string, number> {
  return Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, round(v / n, 2) ?? 0]));
}

type Measured = Awaited<ReturnType<typeof measureOwners>>;

/** One contender's rounds as one measurement: medians of the per-round figures, every latency, summed counts. */
export function combineRounds(rounds: Measured[]): Measured & { roundOps: number[] } {
  const med = (pick: (m: Measured) => number | null) => {
    const values = rounds.map(pick).filter((v): v is number => v !== null);
    return values.length === 0 ? null : median(values);
  };
  return {
    ops: med((m) => m.ops) ?? 0,
    latencies: rounds.flatMap((m) => m.latencies),
    errors: rounds.reduce((a, m) => a + m.errors, 0),
    upstreamCalls: rounds.reduce((a, m) => a + m.upstreamCalls, 0),
    flights: rounds.reduce((a, m) => a + m.flights, 0),
    clientCpuPct: round(
      med((m) => m.clientCpuPct),
      0,
    ),
    redisCpuPct: round(
      med((m) => m.redisCpuPct),
      0,
    ),
    clientCpuUsPerFlight: round(
      med((m) => m.clientCpuUsPerFlight),
      1,
    ),
    redisCpuUsPerFlight: round(
      med((m) => m.redisCpuUsPerFlight),
      1,
    ),
    roundOps: rounds.map((m) => Math.round(m.ops)),
  };
}

/**
 * Runs the distinct-keys scenario on `ctx.redis`; its rows are named `scenario` (`distinct-keys`, or
 * `distinct-keys-valkey` for the same scenario on a Valkey server: see `runThroughputOnValkey`).
 */
export async function runThroughput(
  ctx: BenchContext,
  contenders: ContenderName[],
  opts: ThroughputOptions,
  scenario = 'distinct-keys',
): Promise<ResultRow[]> {
  const rows: ResultRow[] = [];
  const ceilingBefore = await rawCeiling(ctx.redis.url, opts.durationMs, ctx.admin);
  const open: { name: ContenderName; contender: Contender; rounds: Measured[]; failed: boolean }[] = [];
  try {
    for (const name of contenders) {
      let contender: Contender | undefined;
      const ok = await guarded(ctx, rows, scenario, name, async () => {
        contender = await createContender(name, {
          redisUrl: ctx.redis.url,
          prefix: prefixOf(ctx, scenario, name),
          resultTtlMs: 60_000,
        });
        await measureOwners(contender, 'warm', opts, opts.warmupMs);
      });
      if (contender) open.push({ name, contender, rounds: [], failed: !ok });
    }
    for (let r = 0; r < opts.rounds; r++) {
      for (const entry of roundOrder(open, r)) {
        if (entry.failed) continue; // reported once, not measured again
        entry.failed = !(await guarded(ctx, rows, scenario, entry.name, async () => {
          entry.rounds.push(await measureOwners(entry.contender, `run${r}`, opts, opts.durationMs, ctx.admin));
        }));
      }
    }
  } finally {
    await Promise.all(open.map((e) => e.contender.close().catch(() => {})));
  }
  const measured: { name: ContenderName; m: ReturnType<typeof combineRounds> }[] = [];
  for (const { name, rounds, failed } of open) {
    if (failed) continue; // its failure is reported already
    const m = combineRounds(rounds);
    measured.push({ name, m });
    ctx.log(`${scenario} ${name}: ${Math.round(m.ops)} flights/s (rounds ${m.roundOps.join(', ')})`);
  }
  const ceilingAfter = await rawCeiling(ctx.redis.url, opts.durationMs, ctx.admin);
  const best = ceilingBefore.ops >= ceilingAfter.ops ? ceilingBefore : ceilingAfter;
  const ceiling = best.ops;
  rows.push({
    scenario,
    contender: 'raw-evalsha',
    upstreamCalls: null,
    p50Ms: null,
    p99Ms: null,
    maxMs: null,
    opsPerSec: Math.round(ceiling),
    roundTrips: null,
    ceilingRuns: [Math.round(ceilingBefore.ops), Math.round(ceilingAfter.ops)],
    clientCpuPct: best.clientCpuPct,
    redisCpuPct: best.redisCpuPct,
    redisCpuUsPerFlight: best.redisCpuUsPerOp,
    note: 'pipelined EVALSHA of `return 1` (4 loops x 100 per pipeline), ioredis',
  });
  for (const { name, m } of measured) {
    await guarded(ctx, rows, scenario, name, async () => {
      const s = summarize(m.latencies);
      let owner: Counted | undefined;
      let follower: Counted | undefined;
      if (REDIS_CONTENDERS.includes(name)) {
        owner = await countOwner(ctx, name, opts);
        follower = await countFollower(ctx, name, opts);
      }
      rows.push({
        scenario,
        contender: name,
        upstreamCalls: m.upstreamCalls,
        flights: m.latencies.length,
        p50Ms: s.p50Ms,
        p99Ms: s.p99Ms,
        maxMs: s.maxMs,
        opsPerSec: Math.round(m.ops),
        roundOpsPerSec: m.roundOps,
        pctOfCeiling: round((100 * m.ops) / ceiling, 1),
        clientCpuPct: m.clientCpuPct,
        redisCpuPct: m.redisCpuPct,
        clientCpuUsPerFlight: m.clientCpuUsPerFlight,
        redisCpuUsPerFlight: m.redisCpuUsPerFlight,
        roundTrips: owner?.perFlight ?? null,
        ownerSubscriptionCommands: owner?.subscriptionPerFlight ?? null,
        ownerCommands: owner?.byCommand,
        followerRoundTrips: follower?.perFlight ?? null,
        followerSubscriptionCommands: follower?.subscriptionPerFlight ?? null,
        followerCommands: follower?.byCommand,
        followerUpstreamCalls: follower?.upstreamCalls,
        errors: m.errors,
      });
    });
  }
  return rows;
}

/**
 * The distinct-keys scenario again on a Valkey 8.1 server of the run's own, for the contenders that use
 * Redis: there a run nobody touched completes with one `SET … IFEQ` instead of the `complete` script
 * (packages/redis-scripts/src/fast-paths/untouched-complete.ts), as it would on Redis ≥ 8.4. Every contender runs on
 * that same server, so the figures compare as the main scenario's do. Without a valkey-server the rows
 * say why (`kind: 'skipped'`).
 */
export async function runThroughputOnValkey(ctx: BenchContext, contenders: ContenderName[], opts: ThroughputOptions): Promise<ResultRow[]> {
  const scenario = 'distinct-keys-valkey';
  const names = contenders.filter((c) => REDIS_CONTENDERS.includes(c));
  const valkey = await startBenchValkey();
  if ('missing' in valkey) {
    ctx.log(`${scenario}: not run (${valkey.missing})`);
    return names.map((contender) => ({
      scenario,
      contender,
      kind: 'skipped',
      reason: valkey.missing,
      upstreamCalls: null,
      p50Ms: null,
      p99Ms: null,
      maxMs: null,
    }));
  }
  const admin = new Redis(valkey.url);
  try {
    ctx.log(`${scenario}: ${valkey.version} on ${valkey.url}`);
    const rows = await runThroughput({ ...ctx, redis: valkey, admin }, names, opts, scenario);
    for (const row of rows) row.server = valkey.version;
    return rows;
  } finally {
    admin.disconnect();
    await valkey.stop();
  }
}
