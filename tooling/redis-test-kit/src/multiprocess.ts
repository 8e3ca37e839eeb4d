/**
 * Child-process harness for the multi-process tests: `startWorker` runs `worker.ts` in a new Node
 * process (`node --conditions=@flight/source --import tsx`: @flight/* resolve to their source).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { StagePolicyInput } from '@flight/core';
import type { WaitReplicasOptions } from '@flight/redis-scripts';
import type { BurstCommand, CallOutcome, SpanSummary, StreamCommand, StreamOutcome } from './worker';

const here = dirname(fileURLToPath(import.meta.url));

/** A worker's event line, as far as its waiters read it. */
interface WorkerEvent {
  event?: string;
  key?: string;
  n?: number;
  epoch?: number;
}

/** Promises that resolve with the first worker event matching them (each waiter resolves once). */
class EventWaiters {
  private readonly waiting = new Set<{ matches: (event: WorkerEvent) => boolean; resolve: (event: WorkerEvent) => void }>();

  wait(matches: (event: WorkerEvent) => boolean): Promise<WorkerEvent> {
    return new Promise((resolve) => this.waiting.add({ matches, resolve }));
  }

  emit(event: WorkerEvent): void {
    for (const waiter of this.waiting) {
      if (!waiter.matches(event)) continue;
      this.waiting.delete(waiter);
      waiter.resolve(event);
    }
  }
}

export interface WorkerOptions {
  adapter: 'ioredis' | 'node-redis';
  /** Absolute path of the adapter's entry (its src/index.ts). */
  module: string;
  url: string;
  prefix: string;
  nodeId: string;
  mode?: 'distributed' | 'hybrid';
  /** Record spans with the OpenTelemetry SDK in the child (read with `spans()`). @default false */
  tracing?: boolean;
  /** Connect to this Redis Cluster (its masters) instead of `url`. */
  cluster?: { host: string; port: number }[];
  /** Connect through these Sentinels to the primary they name `name`, instead of `url`. */
  sentinel?: { name: string; sentinels: { host: string; port: number }[] };
  /** Turn L1 on with this `l1.ttlMs` (off by default). */
  l1TtlMs?: number;
  /** Stage policies over the worker's defaults (plain data: they cross to the child as JSON). */
  stages?: Record<string, StagePolicyInput>;
  /** The coordinator's `waitReplicas` (off when unset). */
  waitReplicas?: WaitReplicasOptions;
}

export interface StreamBurstResult {
  outcomes: StreamOutcome[];
  /** How many times this process ran a supplier (cumulative). */
  runs: number;
}

export interface BurstResult {
  outcomes: CallOutcome[];
  /** How many times this process ran the supplier (cumulative). */
  runs: number;
}

export interface Worker {
  readonly pid: number;
  readonly child: ChildProcess;
  burst(command: Omit<BurstCommand, 'id' | 'op'>): Promise<BurstResult>;
  /** `executeStream` callers in the worker (see `StreamCommand`). */
  stream(command: Omit<StreamCommand, 'id' | 'op'>): Promise<StreamBurstResult>;
  /** Resolves with the epoch once this worker's supplier emitted its `n`-th chunk of `key`. */
  emitted(key: string, n: number): Promise<number>;
  /** Resolves once a streamed caller in this worker has read `n` items of `key`. */
  read(key: string, n: number): Promise<void>;
  /** Lets this worker's supplier of `key`, held by `holdAt`, go on. */
  release(key: string): void;
  /** Resolves once this worker follows another process's run of `key` (its `follower` event). */
  followed(key: string): Promise<void>;
  /** `flights.forget(stage, key)` in the worker: resolves with its result, rejects with its error. */
  forget(stage: string, key: string): Promise<boolean>;
  /** The child's finished `flight.execute` spans (`tracing: true`). */
  spans(): Promise<SpanSummary[]>;
  /** Resolves with the epoch of the next supplier start. */
  nextRunning(): Promise<number>;
  /** When (epoch ms, this host's clock) the worker heard forgets of `key` (its `forgotten` events), so far. */
  forgottenAt(key: string): number[];
  /** Resolves once the worker has heard a forget of `key` (its first `forgotten` event for it). */
  heardForget(key: string): Promise<void>;
  /** The codes of the reasons its runs of `key` were aborted with (its streamed suppliers' `aborted` events), so far. */
  abortedRuns(key: string): string[];
  stop(): Promise<void>;
}

export async function startWorker(options: WorkerOptions): Promise<Worker> {
  const child = spawn(process.execPath, ['--conditions=@flight/source', '--import', 'tsx', join(here, 'worker.ts')], {
    env: {
      ...process.env,
      FLIGHT_WORKER: JSON.stringify({ mode: 'distributed', ...options }),
    },
    cwd: join(here, '..'),
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const pending = new Map<number, (result: BurstResult & { forgotten?: boolean; error?: string; spans?: SpanSummary[] }) => void>();
  const runningWaiters: ((epoch: number) => void)[] = [];
  const forgotten = new Map<string, number[]>();
  const aborted = new Map<string, string[]>();
  const waiters = new EventWaiters();
  const followedKeys = new Set<string>();
  let seq = 0;
  const ready = new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`worker exited early with ${code}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      let message: {
        event?: string;
        id?: number;
        epoch?: number;
        key?: string;
        n?: number;
        forgotten?: boolean;
        error?: string;
        spans?: SpanSummary[];
        at?: number;
        code?: string;
      } & BurstResult;
      try {
        message = JSON.parse(line);
      } catch {
        return;
      }
      if (message.event === 'ready') resolve();
      else if (message.event === 'running') runningWaiters.shift()?.(message.epoch ?? 0);
      else if (message.event !== undefined) {
        if (message.event === 'forgotten') forgotten.set(message.key!, [...(forgotten.get(message.key!) ?? []), message.at!]);
        if (message.event === 'aborted') aborted.set(message.key!, [...(aborted.get(message.key!) ?? []), String(message.code)]);
        if (message.event === 'follower') followedKeys.add(message.key!);
        waiters.emit(message);
      } else if (message.id !== undefined) pending.get(message.id)?.(message);
    });
  });
  await ready;
  return {
    pid: child.pid!,
    forgottenAt: (key) => forgotten.get(key) ?? [],
    async heardForget(key) {
      if (forgotten.has(key)) return;
      await waiters.wait((event) => event.event === 'forgotten' && event.key === key);
    },
    abortedRuns: (key) => aborted.get(key) ?? [],
    child,
    burst(command) {
      const id = ++seq;
      return new Promise((resolve) => {
        pending.set(id, resolve);
        child.stdin!.write(`${JSON.stringify({ ...command, id, op: 'burst' })}\n`);
      });
    },
    stream(command) {
      const id = ++seq;
      return new Promise((resolve) => {
        pending.set(id, resolve as unknown as (result: BurstResult) => void);
        child.stdin!.write(`${JSON.stringify({ ...command, id, op: 'stream' })}\n`);
      });
    },
    async emitted(key, n) {
      const event = await waiters.wait((e) => e.event === 'emitted' && e.key === key && (e.n ?? 0) >= n);
      return event.epoch ?? 0;
    },
    async read(key, n) {
      await waiters.wait((e) => e.event === 'read' && e.key === key && (e.n ?? 0) >= n);
    },
    async followed(key) {
      if (followedKeys.has(key)) return;
      await waiters.wait((e) => e.event === 'follower' && e.key === key);
    },
    release(key) {
      child.stdin!.write(`${JSON.stringify({ op: 'release', key })}\n`);
    },
    forget(stage, key) {
      const id = ++seq;
      return new Promise((resolve, reject) => {
        pending.set(id, (reply) => (reply.error === undefined ? resolve(reply.forgotten === true) : reject(new Error(reply.error))));
        child.stdin!.write(`${JSON.stringify({ op: 'forget', id, stage, key })}\n`);
      });
    },
    spans() {
      const id = ++seq;
      return new Promise((resolve) => {
        pending.set(id, (message) => resolve(message.spans ?? []));
        child.stdin!.write(`${JSON.stringify({ id, op: 'spans' })}\n`);
      });
    },
    nextRunning() {
      return new Promise((resolve) => runningWaiters.push(resolve));
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      try {
        process.kill(child.pid!, 'SIGCONT');
      } catch {
        // already gone
      }
      child.stdin!.write(`${JSON.stringify({ op: 'exit' })}\n`);
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    },
  };
}
