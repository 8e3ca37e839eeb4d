/** Runs the scenarios against the contenders on one Redis and returns the result rows. */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { Redis } from 'ioredis';
import { deleteKeys, type BenchContext, type ResultRow } from './context.js';
import { availableContenders, CONTENDERS, type ContenderName } from './contenders/index.js';
import { libraryBuild, type LibraryBuild } from './library.js';
import { startWorkers, stopWorkers, type Worker } from './pool.js';
import { startBenchRedis, type BenchRedis } from './redis-server.js';
import { herdOptions, runHerd, type HerdOptions } from './scenarios/herd.js';
import { runWakeup, wakeupOptions } from './scenarios/wakeup.js';
import { runThroughput, runThroughputOnValkey, throughputOptions } from './scenarios/throughput.js';
import { runWaiters, waitersOptions } from './scenarios/waiters.js';
import { footprintOptions, runFootprint } from './scenarios/footprint.js';
import { fanoutOptions, runFanout } from './scenarios/fanout.js';
import { httpOptions, runHttp } from './scenarios/http.js';
import { runStream, streamOptions, type StreamOptions } from './scenarios/stream.js';
import { runStreamResume, streamResumeOptions } from './scenarios/stream-resume.js';
import { forgetReachOptions, runForgetReach } from './scenarios/forget-reach.js';
import { openaiOptions, runOpenAI } from './scenarios/openai.js';
import { expiryOptions, runExpiry } from './scenarios/expiry.js';
import { replicaAckOptions, runReplicaAck } from './scenarios/replica-ack.js';
import { aiSdkOptions, runAiSdk } from './scenarios/ai-sdk.js';
import { resumableOptions, runResumable } from './scenarios/resumable.js';
import { nowMs } from './stats.js';
import { compareRows } from './targets.js';

export const SCENARIOS = [
  'herd',
  'wakeup',
  'distinct-keys',
  'distinct-keys-valkey',
  'many-waiters',
  'footprint',
  'fan-out',
  'http',
  'stream',
  'stream-resume',
  'forget-reach',
  'openai',
  'expiry',
  'replica-ack',
  'ai-sdk',
  'resumable-stream',
] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

export interface BenchOptions {
  quick?: boolean;
  scenarios?: readonly ScenarioName[];
  contenders?: readonly ContenderName[];
  /** Overrides of the herd scenario (the test uses a smaller one). */
  herd?: Partial<HerdOptions>;
  /** Overrides of the streaming herd scenario. */
  stream?: Partial<StreamOptions>;
  log?: (message: string) => void;
}

export interface BenchRun {
  rows: ResultRow[];
  contenders: ContenderName[];
  skipped: { contender: string; reason: string }[];
  /** Scenarios that threw: the run goes on with the next one and reports why. */
  failed: { scenario: string; reason: string }[];
  redis: { version: string; own: boolean };
  quick: boolean;
  durationMs: number;
  startedAt: string;
  /** 1-minute load average at the start and the end (the machine may be shared with other work). */
  load: [number, number];
  /** The @flight packages measured (library.ts). */
  library: LibraryBuild;
}

export async function runBench(options: BenchOptions = {}): Promise<BenchRun> {
  const started = nowMs();
  const startedAt = new Date().toISOString();
  const loadStart = loadavg()[0]!;
  const quick = options.quick ?? false;
  const log = options.log ?? (() => {});
  const scenarios = options.scenarios ?? SCENARIOS;
  const wanted = options.contenders ?? CONTENDERS;
  const contenders = await availableContenders(wanted);
  const skipped = wanted
    .filter((c) => !contenders.includes(c))
    .map((c) => ({ contender: c, reason: 'adapter package does not export its coordinator factory yet' }));
  for (const s of skipped) log(`skipping ${s.contender}: ${s.reason}`);

  let redis: BenchRedis | undefined;
  let admin: Redis | undefined;
  let workers: Worker[] = [];
  const runId = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  const rows: ResultRow[] = [];
  const failed: { scenario: string; reason: string }[] = [];
  // Ctrl-C or a kill still stops the redis-server and the workers this run started.
  const onSignal = (signal: NodeJS.Signals) => {
    void (async () => {
      await stopWorkers(workers).catch(() => {});
      await redis?.stop().catch(() => {});
      process.exit(signal === 'SIGINT' ? 130 : 143);
    })();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    redis = await startBenchRedis();
    log(`redis ${redis.url} (${redis.own ? 'own server' : 'external'}), run ${runId}`);
    admin = new Redis(redis.url);
    const needWorkers = scenarios.some(
      (s) => s === 'herd' || s === 'wakeup' || s === 'many-waiters' || s === 'fan-out' || s === 'stream' || s === 'stream-resume',
    );
    if (needWorkers) {
      workers = await startWorkers(3);
      await Promise.all(workers.map((w) => w.call('init', { counterUrl: redis!.url })));
    }
    const ctx: BenchContext = { quick, redis, admin, runId, workers, contenders, log };
    for (const scenario of scenarios) {
      const t = nowMs();
      try {
        if (scenario === 'herd') rows.push(...(await runHerd(ctx, contenders, { ...herdOptions(quick), ...options.herd })));
        if (scenario === 'wakeup') rows.push(...(await runWakeup(ctx, contenders, wakeupOptions(quick))));
        if (scenario === 'distinct-keys') rows.push(...(await runThroughput(ctx, contenders, throughputOptions(quick))));
        if (scenario === 'distinct-keys-valkey') rows.push(...(await runThroughputOnValkey(ctx, contenders, throughputOptions(quick))));
        if (scenario === 'many-waiters') rows.push(...(await runWaiters(ctx, contenders, waitersOptions(quick))));
        if (scenario === 'footprint') rows.push(...(await runFootprint(ctx, contenders, footprintOptions(quick))));
        if (scenario === 'fan-out') rows.push(...(await runFanout(ctx, contenders, fanoutOptions(quick))));
        if (scenario === 'http') rows.push(...(await runHttp(ctx, httpOptions(quick))));
        if (scenario === 'forget-reach') rows.push(...(await runForgetReach(ctx, contenders, forgetReachOptions(quick))));
        if (scenario === 'stream') rows.push(...(await runStream(ctx, contenders, { ...streamOptions(quick), ...options.stream })));
        if (scenario === 'openai') rows.push(...(await runOpenAI(ctx, openaiOptions(quick))));
        if (scenario === 'stream-resume') rows.push(...(await runStreamResume(ctx, contenders, streamResumeOptions(quick))));
        if (scenario === 'expiry') rows.push(...(await runExpiry(ctx, contenders, expiryOptions(quick))));
        if (scenario === 'replica-ack') rows.push(...(await runReplicaAck(ctx, replicaAckOptions(quick))));
        if (scenario === 'ai-sdk') rows.push(...(await runAiSdk(ctx, aiSdkOptions(quick))));
        if (scenario === 'resumable-stream') rows.push(...(await runResumable(ctx, resumableOptions(quick))));
        for (const r of rows.filter((x) => x.scenario === scenario && x.kind === 'failed'))
          failed.push({ scenario, reason: `${r.contender}: ${String(r.reason)}` });
        log(`${scenario} done in ${((nowMs() - t) / 1000).toFixed(1)} s`);
      } catch (error) {
        const reason = error instanceof Error ? error.message.split('\n')[0]! : String(error);
        failed.push({ scenario, reason });
        log(`${scenario} FAILED after ${((nowMs() - t) / 1000).toFixed(1)} s: ${reason}`);
        // Workers may hold a half set-up contender: start the next scenario from a clean state.
        await Promise.all(workers.map((w) => w.call('teardown').catch(() => {})));
      }
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await stopWorkers(workers).catch(() => {});
    if (admin) {
      await deleteKeys(admin, `fb:${runId}:*`).catch(() => {});
      admin.disconnect();
    }
    await redis?.stop();
  }
  return {
    rows: compareRows(rows),
    contenders,
    skipped,
    failed,
    redis: { version: redis?.version ?? 'unknown', own: redis?.own ?? false },
    quick,
    durationMs: nowMs() - started,
    startedAt,
    load: [loadStart, loadavg()[0]!],
    library: libraryBuild(),
  };
}
