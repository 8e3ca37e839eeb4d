/**
 * Scenario 6 — fan-out: does a process receive only the notices of flights it waits on?
 *
 * 8 forked waiter processes; process i waits on `unit × (1 + i % 4)` keys of its own (one caller per
 * key), while the harness process holds every owner open. Once every caller is parked as a follower
 * the owners are released together. Per process: the coordinator's own counters
 * (`coordinator.notifications`, null where the coordinator has none) and the same observed from
 * outside through counting proxies (the subscriber connections' bytes and pushed messages; one proxy
 * per master on Cluster). Then the same on a local 3-master Redis Cluster started here, plus per master:
 * flights whose keys the master holds, notices published there (`INFO commandstats`), publish
 * messages it received over the cluster bus (`CLUSTER INFO`), and the shard channels subscribed on
 * it while the callers wait, each checked against the master's slots.
 */
import { Redis } from 'ioredis';
import { startRedisCluster, type RedisCluster } from '@flight/test-servers';
import { prefixOf, type BenchContext, type ResultRow } from '../context.js';
import { createContender, FLIGHT_CONTENDERS, type ContenderName, type ContenderOptions } from '../contenders/index.js';
import { startWorkers, stopWorkers, type Worker } from '../pool.js';
import { nowMs, sleep } from '../stats.js';
import { hold } from '../tasks.js';
import { connectMasters, flightsOn, masterStats, shardChannels, type Masters } from '../cluster-stats.js';

export interface FanoutOptions {
  processes: number;
  /** Process i waits on `unit × (1 + i % 4)` keys. */
  unit: number;
  /** Longest wait for every caller to be parked as a follower. */
  settleMs: number;
  /** Also run on a local 3-master Redis Cluster started by the scenario. */
  cluster: boolean;
}

export function fanoutOptions(quick: boolean): FanoutOptions {
  return { processes: 8, unit: quick ? 5 : 20, settleMs: quick ? 1500 : 3000, cluster: true };
}

type Topology = 'standalone' | 'cluster';

/** Channels subscribed by all clients of these servers (`sub` + `ssub` + `psub` of CLIENT LIST). */
async function subscriptions(servers: Redis[]): Promise<number> {
  let n = 0;
  for (const server of servers) {
    const list = (await server.call('CLIENT', 'LIST')) as string;
    for (const m of list.matchAll(/ (?:sub|ssub|psub)=(\d+)/g)) n += Number(m[1]);
  }
  return n;
}

/**
 * Waits until the waiter processes' subscriptions are in place (a notice published before a
 * subscription is live would be missed by design, not by the filter measured here): at least one
 * channel per process and no change for 150 ms, at most `timeoutMs`.
 */
async function subscriptionsSettled(servers: Redis[], processes: number, timeoutMs: number): Promise<number> {
  const end = nowMs() + timeoutMs;
  let last = -1;
  let quiet = 0;
  while (nowMs() < end) {
    const n = await subscriptions(servers);
    quiet = n === last ? quiet + 1 : 0;
    last = n;
    if (n >= processes && quiet >= 3) break;
    await sleep(50);
  }
  return last;
}

interface FinishReply {
  calls: number;
  errors: number;
  errorSamples: string[];
  roles: Record<string, number>;
  upstreamCalls: number;
}

interface ReportReply {
  counters: { received: number; foreign: number; bytes: number; channels: number } | null;
  observed: { notices: number; own: number; foreign: number; bytes: number; ownFlights: number } | null;
  connectionsOpened: number[] | null;
}

function reportFields(r: ReportReply): Record<string, number | number[] | null> {
  return {
    noticesReceived: r.counters?.received ?? null,
    foreignNotices: r.counters?.foreign ?? null,
    subscriberBytes: r.counters?.bytes ?? null,
    observedNotices: r.observed?.notices ?? null,
    observedOwnNotices: r.observed?.own ?? null,
    /** Flights (hash tags) this process's commands named: should equal `ownFlights`. */
    observedOwnFlights: r.observed?.ownFlights ?? null,
    /** Connections the process opened to each server (each master on Cluster; discovery included). */
    connectionsOpened: r.connectionsOpened,
    observedForeignNotices: r.observed?.foreign ?? null,
    observedSubscriberBytes: r.observed?.bytes ?? null,
  };
}

async function runOne(
  ctx: BenchContext,
  workers: Worker[],
  name: ContenderName,
  topology: Topology,
  opts: FanoutOptions,
  masters?: Masters,
): Promise<ResultRow[]> {
  const t0 = nowMs();
  const prefix = prefixOf(ctx, `fanout-${topology}`, name);
  const options: ContenderOptions = {
    redisUrl: ctx.redis.url,
    prefix,
    resultTtlMs: 60_000,
    ...(masters ? { cluster: masters.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })) } : {}),
  };
  const keysOf = (i: number) => Array.from({ length: opts.unit * (1 + (i % 4)) }, (_, j) => `p${i}-k${j}`);
  await Promise.all(workers.map((w) => w.call('setup', { name, options, observeSubscribers: true })));
  const owner = await createContender(name, options);
  try {
    const before = masters ? await Promise.all(masters.nodes.map((n) => masterStats(n.client))) : [];
    const allKeys = workers.flatMap((_, i) => keysOf(i));
    const held = hold(owner, undefined, { keys: allKeys, upstream: { delayMs: 0, payloadBytes: 1024 } });
    const owning = await held.started(10_000);
    if (owning < allKeys.length) throw new Error(`only ${owning} of ${allKeys.length} owners started`);
    const parked = await Promise.all(
      workers.map((w, i) =>
        w.call<{ parked: number | null; channels: number | null }>('ownWaitersStart', { keys: keysOf(i), settleMs: opts.settleMs }),
      ),
    );
    const subscribed = await subscriptionsSettled(
      masters ? masters.nodes.map((n) => n.client) : [ctx.admin],
      workers.length,
      opts.settleMs,
    );
    const channels = masters ? await Promise.all(masters.nodes.map(shardChannels)) : [];
    const [ownerResult, ...finished] = await Promise.all([held.release(), ...workers.map((w) => w.call<FinishReply>('ownWaitersFinish'))]);
    // Every flight has completed: give the last notices and the cluster bus counters a moment, then read.
    await sleep(100);
    const reports = await Promise.all(workers.map((w) => w.call<ReportReply>('ownWaitersReport')));
    const after = masters ? await Promise.all(masters.nodes.map((n) => masterStats(n.client))) : [];
    const rows: ResultRow[] = finished.map((f, i) => ({
      ...reportFields(reports[i]!),
      scenario: 'fan-out',
      contender: name,
      topology,
      kind: 'process',
      process: i,
      ownFlights: keysOf(i).length,
      parked: parked[i]!.parked,
      upstreamCalls: f.upstreamCalls,
      p50Ms: null,
      p99Ms: null,
      maxMs: null,
      channels: parked[i]!.channels,
      subscribedChannelsAllProcesses: subscribed,
      roles: f.roles,
      errors: f.errors,
      errorSamples: f.errorSamples,
    }));
    if (masters) {
      for (const [m, node] of masters.nodes.entries()) {
        rows.push({
          scenario: 'fan-out',
          contender: name,
          topology,
          kind: 'master',
          port: node.port,
          upstreamCalls: null,
          p50Ms: null,
          p99Ms: null,
          maxMs: null,
          flightsOwned: await flightsOn(node.client, prefix),
          noticesPublished: after[m]!.published - before[m]!.published,
          busPublishReceived: after[m]!.busReceived - before[m]!.busReceived,
          busPublishSent: after[m]!.busSent - before[m]!.busSent,
          shardChannels: channels[m]!.shard,
          shardChannelsOfOtherSlots: channels[m]!.otherSlots,
          plainChannels: channels[m]!.plain,
        });
      }
    }
    const ownerErrors = ownerResult.calls.filter((c) => c.error).length;
    if (ownerErrors) rows[0]!.ownerErrors = ownerErrors;
    const foreign = rows.filter((r) => r.kind === 'process').map((r) => r.foreignNotices ?? r.observedForeignNotices);
    ctx.log(`fan-out ${topology} ${name}: foreign notices per process ${foreign.join('/')} (${Math.round(nowMs() - t0)} ms)`);
    return rows;
  } finally {
    await owner.close();
    await Promise.all(workers.map((w) => w.call('teardown').catch(() => {})));
  }
}

/** A run that could not be measured: `skipped` (no cluster on this machine) or `failed` (it threw). */
const skippedRow = (name: string, topology: Topology, reason: string, kind: 'skipped' | 'failed' = 'skipped'): ResultRow => ({
  scenario: 'fan-out',
  contender: name,
  topology,
  kind,
  reason,
  upstreamCalls: null,
  p50Ms: null,
  p99Ms: null,
  maxMs: null,
});

const reasonOf = (error: unknown) => (error instanceof Error ? error.message.split('\n')[0]! : String(error));

export async function runFanout(ctx: BenchContext, contenders: ContenderName[], opts: FanoutOptions): Promise<ResultRow[]> {
  const names = contenders.filter((c) => FLIGHT_CONTENDERS.includes(c));
  if (!names.length) return [];
  const rows: ResultRow[] = [];
  // The cluster starts while the standalone runs go; the harness's workers are reused, the rest forked.
  const clusterStart = opts.cluster ? startRedisCluster({ masters: 3 }) : undefined;
  clusterStart?.catch(() => {});
  const extra = await startWorkers(Math.max(0, opts.processes - ctx.workers.length));
  await Promise.all(extra.map((w) => w.call('init', { counterUrl: ctx.redis.url })));
  const workers = [...ctx.workers.slice(0, opts.processes), ...extra];
  try {
    for (const name of names) {
      try {
        rows.push(...(await runOne(ctx, workers, name, 'standalone', opts)));
      } catch (error) {
        rows.push(skippedRow(name, 'standalone', reasonOf(error), 'failed'));
        ctx.log(`fan-out standalone ${name} failed: ${reasonOf(error)}`);
      }
    }
    if (!clusterStart) return rows;
    let cluster: RedisCluster | undefined;
    let masters: Masters | undefined;
    try {
      cluster = await clusterStart;
      masters = await connectMasters(cluster);
    } catch (error) {
      for (const name of names) rows.push(skippedRow(name, 'cluster', `no local Redis Cluster: ${reasonOf(error)}`));
      ctx.log(`fan-out cluster skipped: ${reasonOf(error)}`);
    }
    try {
      if (masters) {
        for (const name of names) {
          try {
            rows.push(...(await runOne(ctx, workers, name, 'cluster', opts, masters)));
          } catch (error) {
            rows.push(skippedRow(name, 'cluster', reasonOf(error), 'failed'));
            ctx.log(`fan-out cluster ${name} failed: ${reasonOf(error)}`);
          }
        }
      }
    } finally {
      masters?.close();
    }
  } finally {
    await stopWorkers(extra);
    // Also when a standalone run threw before the cluster was used.
    await clusterStart?.then(
      (c) => c.stop(),
      () => {},
    );
  }
  return rows;
}
