/**
 * The cross-feature oracle's run: several nodes (`distributed` with and without L1, `hybrid` behind a TCP
 * proxy that can cut it off, `local`) of one adapter on a Redis of the run's own, driven either by a schedule
 * drawn from a seed — calls with random per-call options (`fresh`, `staleRefresh: 'caller'`,
 * `resultTtlMs`), suppliers that are quick or slow and sometimes fail, forgets on random nodes, pauses
 * through stale windows, outages of the hybrid node — or by a named case (`named-cases.ts`), and recorded
 * from outside (`history.ts`), then checked against the rules. A schedule replays from its seed; the timings
 * between steps are the machine's, so a replay meets the same steps, not always the same interleaving.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { createSingleFlight, FlightStreamRestart, type SingleFlight, type StagePolicyInput, type StreamPosition } from '@flight/core';
import { seeded, startTcpProxy, type TcpProxy } from '@flight/test-servers';
import type { RedisAdapterUnderTest } from '../adapter-suite';
import {
  checkHistory,
  type CallRecord,
  type History,
  type NodeMode,
  type RunRecord,
  type Span,
  type StreamRecord,
  type Violation,
  type Windows,
} from './history';

export interface OracleRunOptions {
  /** How long the schedule runs, ms (the run then waits for every call to settle). */
  durationMs: number;
  /** The Redis the nodes share (a server of the test's own). */
  redisUrl: string;
  prefix: string;
}

export interface OracleReport {
  violations: Violation[];
  calls: number;
  runs: number;
  forgets: number;
  outages: number;
  roles: Record<string, number>;
  heapGrowthMb: number;
  /** The longest time the process could not run a timer (ms): see `watchStalls`. */
  longestStallMs: number;
}

const ORACLE_POLICY: StagePolicyInput = {
  heartbeatIntervalMs: 500,
  takeoverAfterMs: 2000,
  pollIntervalMs: 50,
  waitTimeoutMs: 8000,
  maxRunMs: 8000,
  resultTtlMs: 300,
  guard: { retry: false, circuitBreaker: false, timeoutMs: 0 },
};
/** `plain`: no stale values; `swr`: stale while revalidating and on error; `long`: the same, for seconds. */
const STAGES: Record<string, StagePolicyInput> = {
  plain: {},
  swr: { stale: { whileRevalidateMs: 400, ifErrorMs: 600, retryAfterMs: 200 } },
  long: { stale: { whileRevalidateMs: 2000, ifErrorMs: 2000, retryAfterMs: 200 } },
};
/** Streamed flights have a stage of their own (a streamed flight's value is its chunk list). */
const STREAM_STAGE = 'streamed';
/** What the checks hold each stage's values to, read from its policy. */
const WINDOWS: Record<string, Windows> = Object.fromEntries(
  Object.entries(STAGES).map(([name, stage]) => [
    name,
    { resultTtlMs: ORACLE_POLICY.resultTtlMs!, staleMs: Math.max(stage.stale?.whileRevalidateMs ?? 0, stage.stale?.ifErrorMs ?? 0) },
  ]),
);
/**
 * How long after a forget resolved another node may still act on what it held (its notice takes about a
 * millisecond on an idle machine; the allowance is for a busy one), until the owner's next heartbeat for a
 * caller joining the forgotten run; the slack between a run's end and what is measured of its copies; and
 * how long the process must stand still before a running owner may lose its lease (the takeover time); and
 * how long a client takes to send what it queued once an outage is over.
 */
const ALLOW = {
  noticeMs: 500,
  heartbeatMs: 2 * ORACLE_POLICY.heartbeatIntervalMs! + 250,
  slackMs: 250,
  stallMs: ORACLE_POLICY.takeoverAfterMs!,
  // ioredis waits up to 2 s between attempts to connect again.
  reconnectMs: 2000,
};
/** Hot keys meet every feature at once; cold ones are read once here and there (no node listens on them). */
const HOT_KEYS = ['k0', 'k1'];
const COLD_KEYS = Array.from({ length: 12 }, (_, i) => `c${i}`);

export interface OracleNode {
  name: string;
  mode: NodeMode;
  flight: SingleFlight;
  close: () => Promise<void>;
  proxy?: TcpProxy;
}

/** What a run's record takes of its supplier's context. */
type RunContext = { role: 'owner' | 'local'; takeover: boolean; epoch: number | undefined };

/** A call's supplier: how long it works, whether it fails; `started` is told when it runs. */
export interface Work {
  ms: number;
  fails?: boolean;
  started?: () => void;
}

/** The events a report of a broken rule lists. */
const REPORTED_EVENTS = ['owner', 'follower', 'fenced', 'lease-lost', 'fallback', 'coordination-error', 'forgotten', 'replay'] as const;

/** How often the stall watch's timer is due, and how late it may run before the time counts as a stall (ms). */
const STALL_WATCH = { everyMs: 20, lateMs: 200 };

/**
 * Records each span in which this process ran no timer for `STALL_WATCH.lateMs` past its due time (a busy
 * machine left it no CPU, or a long garbage collection): every node of the run lives in this process, so no
 * node could renew a lease meanwhile. Returns the function that stops the watch.
 */
function watchStalls(stalls: Span[]): () => void {
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    if (now - last > STALL_WATCH.everyMs + STALL_WATCH.lateMs) stalls.push({ start: last, end: now });
    last = now;
  }, STALL_WATCH.everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** The nodes of a run, and every step taken on them, recorded. */
export class OracleRecorder {
  readonly history: History;
  private readonly pending: Promise<unknown>[] = [];
  private runIds = 0;
  private readonly stopStallWatch: () => void;

  constructor(readonly nodes: OracleNode[]) {
    this.history = {
      nodes: Object.fromEntries(nodes.map((n) => [n.name, n.mode])),
      runs: new Map(),
      calls: [],
      streams: [],
      forgets: [],
      outages: {},
      stalls: [],
      events: [],
    };
    this.stopStallWatch = watchStalls(this.history.stalls);
    for (const node of nodes) if (node.mode !== 'local') this.recordEvents(node);
  }

  /** Keeps the lifecycle events of `node` that say who ran what (for reports of a broken rule). */
  private recordEvents(node: OracleNode): void {
    for (const name of REPORTED_EVENTS) {
      node.flight.on(name, (payload) => {
        const { stage, key, ...rest } = payload as { stage: string; key: string };
        this.history.events.push({ node: node.name, at: performance.now(), name, stage, key, detail: JSON.stringify(rest) });
      });
    }
  }

  node(name: string): OracleNode {
    return this.nodes.find((node) => node.name === name)!;
  }

  /** Records a run a supplier of `node` starts; the caller sets its `end`. */
  private runStarted(node: OracleNode, stage: string, key: string, context: RunContext, failed: boolean, step: string): RunRecord {
    const run = {
      id: ++this.runIds,
      node: node.name,
      stage,
      key,
      role: context.role,
      takeover: context.takeover,
      epoch: context.epoch,
      step,
      failed,
      start: performance.now(),
      end: Infinity,
    };
    this.history.runs.set(run.id, run);
    return run;
  }

  /** A call of `stage`/`key` on `node`; resolves once it settled (never rejects). */
  call(node: OracleNode, stage: string, key: string, options: CallRecord['options'], work: Work): Promise<CallRecord> {
    const record: CallRecord = { node: node.name, stage, key, options, start: performance.now(), end: 0 };
    const step = `call ${this.history.calls.push(record) - 1}`;
    const supplier = async (context: RunContext) => {
      const run = this.runStarted(node, stage, key, context, work.fails === true, step);
      work.started?.();
      await sleep(work.ms);
      run.end = performance.now();
      if (work.fails) throw Object.assign(new Error('upstream 503'), { status: 503 });
      return { key: `${stage}/${key}`, run: run.id };
    };
    const settled = node.flight.execute(stage, key, supplier, options).then(
      (result) => {
        const value = result.value as { key: string; run: number };
        record.outcome = { ok: true, run: value.run, valueKey: value.key, role: result.role, ageMs: result.ageMs };
      },
      (error: unknown) => {
        record.outcome = { ok: false, error: (error as Error).message };
      },
    );
    const done = settled.then(() => {
      record.end = performance.now();
      return record;
    });
    this.pending.push(done);
    return done;
  }

  /**
   * A streamed call of `key` (its own stage) on `node` whose client leaves after `leaveAfter` chunks and
   * resumes from there on `resumeNode` (after `beforeResume`), marking restarts; its run yields `chunks`
   * chunks, `gapMs` apart.
   */
  stream(
    node: OracleNode,
    resumeNode: OracleNode,
    key: string,
    shape: { chunks: number; gapMs: number; leaveAfter: number; beforeResume?: () => Promise<void> },
  ): Promise<StreamRecord> {
    const stage = STREAM_STAGE;
    const record: StreamRecord = {
      node: node.name,
      resumeNode: resumeNode.name,
      stage,
      key,
      first: [],
      resumed: [],
      start: performance.now(),
      end: 0,
    };
    const step = `stream ${this.history.streams.push(record) - 1}`;
    const supplier = async function* (this: OracleRecorder, context: RunContext) {
      const run = this.runStarted(node, stage, key, context, false, step);
      try {
        for (let i = 0; i < shape.chunks; i++) {
          await sleep(shape.gapMs);
          yield `${stage}/${key}|${run.id}|${i}`;
        }
      } finally {
        run.end = performance.now();
      }
    };
    const read = async (flight: SingleFlight, into: string[], after?: StreamPosition, leaveAfter = Infinity) => {
      const stream = flight.executeStream(stage, key, (context) => supplier.call(this, context), {
        onRestart: 'restart',
        ...(after ? { after } : {}),
      });
      let index = after?.index ?? 0;
      for await (const chunk of stream) {
        if (chunk instanceof FlightStreamRestart) {
          into.push('restart');
          index = 0;
          continue;
        }
        into.push(String(chunk));
        if (++index >= leaveAfter) break;
      }
      return { epoch: stream.epoch, index };
    };
    const done = (async () => {
      try {
        const position = await read(node.flight, record.first, undefined, shape.leaveAfter);
        if (position.index >= shape.leaveAfter) {
          await shape.beforeResume?.();
          await read(resumeNode.flight, record.resumed, position);
        }
        record.outcome = { ok: true };
      } catch (error) {
        record.outcome = { ok: false, error: (error as Error).message };
      }
      record.end = performance.now();
      return record;
    })();
    this.pending.push(done);
    return done;
  }

  /** A forget of `stage`/`key` on `node`; resolves once it settled (never rejects). */
  forget(node: OracleNode, stage: string, key: string): Promise<void> {
    const record = { node: node.name, stage, key, start: performance.now(), end: 0, ok: false };
    this.history.forgets.push(record);
    const done = node.flight.forget(stage, key).then(
      () => {
        record.ok = true;
      },
      () => undefined,
    );
    const ended = done.then(() => {
      record.end = performance.now();
    });
    this.pending.push(ended);
    return ended;
  }

  /**
   * Cuts `node` (the hybrid one) off from Redis for `ms`: `reset` drops its connections and refuses new
   * ones; `stall` keeps them and swallows every byte (no reply comes), then resets them.
   */
  outage(node: OracleNode, ms: number, kind: 'reset' | 'stall' = 'reset'): Promise<void> {
    const proxy = node.proxy!;
    const span = { start: performance.now(), end: Infinity };
    (this.history.outages[node.name] ??= []).push(span);
    if (kind === 'stall') proxy.mode = 'blackhole';
    else {
      proxy.mode = 'reset';
      proxy.resetAll();
    }
    const over = sleep(ms).then(() => {
      proxy.mode = 'pass';
      // A stalled connection ends as a real one does (TCP never loses bytes and goes on): it is reset.
      if (kind === 'stall') proxy.resetAll();
      span.end = performance.now();
    });
    this.pending.push(over);
    return over;
  }

  /** Waits for every step to settle (each call is bounded by the stage's waitTimeoutMs and maxRunMs). */
  async settle(): Promise<void> {
    const limitMs = ORACLE_POLICY.waitTimeoutMs! + ORACLE_POLICY.maxRunMs! + 5000;
    await Promise.race([Promise.allSettled(this.pending), sleep(limitMs)]);
  }

  /** Stops recording stalls (the run is over). */
  stop(): void {
    this.stopStallWatch();
  }

  report(heapBefore: number): OracleReport {
    const { history } = this;
    for (const run of history.runs.values()) if (run.end === Infinity) run.end = performance.now();
    const roles: Record<string, number> = { streams: history.streams.length };
    for (const c of history.calls) {
      const role = c.outcome ? (c.outcome.ok ? c.outcome.role : 'error') : 'unsettled';
      roles[role] = (roles[role] ?? 0) + 1;
    }
    return {
      violations: checkHistory(history, WINDOWS, ALLOW),
      calls: history.calls.length,
      runs: history.runs.size,
      forgets: history.forgets.length,
      outages: Object.values(history.outages).flat().length,
      roles,
      heapGrowthMb: (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20,
      longestStallMs: Math.round(Math.max(0, ...history.stalls.map((stall) => stall.end - stall.start))),
    };
  }
}

async function startNodes(adapter: Pick<RedisAdapterUnderTest, 'coordinator'>, options: OracleRunOptions): Promise<OracleNode[]> {
  const { redisUrl, prefix } = options;
  const proxy = await startTcpProxy({ port: Number(new URL(redisUrl).port) });
  const make = (name: string, mode: NodeMode, l1: boolean, url = redisUrl, withProxy?: TcpProxy): OracleNode => {
    const coordinator = mode === 'local' ? undefined : adapter.coordinator(url, { prefix, commandTimeoutMs: 400 });
    const flight = createSingleFlight({
      nodeId: name,
      mode,
      ...(coordinator ? { coordinator } : {}),
      defaults: { ...ORACLE_POLICY, l1: { enabled: l1, ttlMs: 1000 } },
      stages: { ...STAGES, [STREAM_STAGE]: {} },
      fallbackCooldownMs: 200,
      telemetry: false,
    });
    const close = async () => {
      await flight.close();
      await coordinator?.close();
      await withProxy?.close();
    };
    return { name, mode, flight, close, ...(withProxy ? { proxy: withProxy } : {}) };
  };
  return [
    make('d1', 'distributed', true),
    make('d2', 'distributed', false),
    make('h1', 'hybrid', true, proxy.url, proxy),
    make('l1', 'local', true),
  ];
}

/** Starts the nodes, runs `schedule` on them, waits for every step to settle and checks the history. */
export async function runOracle(
  adapter: Pick<RedisAdapterUnderTest, 'coordinator'>,
  options: OracleRunOptions,
  schedule: (recorder: OracleRecorder) => Promise<void>,
): Promise<OracleReport> {
  const nodes = await startNodes(adapter, options);
  const recorder = new OracleRecorder(nodes);
  const heapBefore = process.memoryUsage().heapUsed;
  try {
    await schedule(recorder);
    await recorder.settle();
  } finally {
    recorder.stop();
    for (const node of nodes) if (node.proxy) node.proxy.mode = 'pass';
    await Promise.all(nodes.map((node) => node.close()));
  }
  return recorder.report(heapBefore);
}

/** The schedule drawn from `seed`, for `durationMs`. */
export function randomSchedule(seed: number, durationMs: number): (recorder: OracleRecorder) => Promise<void> {
  return async (recorder) => {
    const random = seeded(seed);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
    const pickKey = () => (random() < 0.7 ? pick(HOT_KEYS) : pick(COLD_KEYS));
    const stages = Object.keys(STAGES);
    const hybrid = recorder.nodes.find((node) => node.proxy);
    const until = performance.now() + durationMs;
    while (performance.now() < until) {
      const step = random();
      if (step < 0.06) {
        // A streamed call whose client leaves and resumes on another node (its own, for a local node).
        const node = pick(recorder.nodes);
        const resumeNode = node.mode === 'local' ? node : pick(recorder.nodes.filter((n) => n.mode !== 'local'));
        const chunks = 2 + Math.floor(random() * 6);
        void recorder.stream(node, resumeNode, pickKey(), {
          chunks,
          gapMs: Math.floor(random() * 60),
          leaveAfter: 1 + Math.floor(random() * chunks),
        });
      } else if (step < 0.78) {
        const draw = random();
        const options: CallRecord['options'] = {};
        if (draw < 0.1) options.fresh = true;
        else if (draw < 0.4) options.staleRefresh = 'caller';
        if (random() < 0.15) options.resultTtlMs = 50 + Math.floor(random() * 250);
        // Most runs are quick; some last long enough for forgets, refreshes and outages to meet them.
        const ms = random() < 0.6 ? Math.floor(random() * 50) : 150 + Math.floor(random() * 450);
        void recorder.call(pick(recorder.nodes), pick(stages), pickKey(), options, { ms, fails: random() < 0.08 });
      } else if (step < 0.9) void recorder.forget(pick(recorder.nodes), pick([...stages, STREAM_STAGE]), pickKey());
      else if (step < 0.93 && hybrid?.proxy?.mode === 'pass')
        void recorder.outage(hybrid, 200 + Math.floor(random() * 1400), random() < 0.5 ? 'reset' : 'stall');
      else if (step < 0.96) await sleep(250 + Math.floor(random() * 500));
      await sleep(Math.floor(random() * 25));
    }
  };
}
