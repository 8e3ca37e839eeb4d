/**
 * A test child process: one Node process of a "cluster" of app servers, running `createSingleFlight`
 * in distributed mode over a Redis adapter. Driven by JSON lines on stdin, answers JSON lines on stdout.
 * Started by `startWorker` (multiprocess.ts) with `node --import tsx`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { createSingleFlight, FlightStreamRestart, type FlightMode, type StagePolicyInput } from '@flight/core';
import { type FlightCoordinator } from '@flight/core/adapter';
import type { WaitReplicasOptions } from '@flight/redis-scripts';

interface WorkerConfig {
  adapter: 'ioredis' | 'node-redis';
  module: string;
  url: string;
  prefix: string;
  nodeId: string;
  mode: FlightMode;
  /** Record `flight.execute` spans with the OpenTelemetry SDK (in-memory exporter), read by the `spans` op. */
  tracing?: boolean;
  /** Connect to this Redis Cluster (its masters) instead of `url`. */
  cluster?: { host: string; port: number }[];
  /** Connect through these Sentinels to the primary they name `name`, instead of `url`. */
  sentinel?: { name: string; sentinels: { host: string; port: number }[] };
  /** L1 on with this TTL (off when unset). */
  l1TtlMs?: number;
  /** Stage policies over the worker's defaults. */
  stages?: Record<string, StagePolicyInput>;
  /** The coordinator's `waitReplicas` (off when unset). */
  waitReplicas?: WaitReplicasOptions;
}

/** A finished `flight.execute` span, as the `spans` op reports it. */
export interface SpanSummary {
  role: string;
  epoch: number | undefined;
  traceId: string;
  spanId: string;
  /** Span ids of its links (a follower's or replay's link points at the owner's span). */
  links: string[];
}

export interface BurstCommand {
  id: number;
  op: 'burst';
  stage: string;
  key: string;
  callers: number;
  /** value: resolve `value` after `delayMs`; fail-hard / fail-soft: throw after `delayMs`; hang: never settle (ignores aborts). */
  behavior: 'value' | 'fail-hard' | 'fail-soft' | 'hang';
  delayMs: number;
  value: string;
  /** Callers pass `fresh: true` (never a stale value). */
  fresh?: boolean;
  /** Each run of the supplier holds (after its `running` event) until a `release` of the key. */
  hold?: boolean;
}

/**
 * `callers` concurrent `executeStream` calls of one key; the supplier yields `chunks` chunks `gapMs` apart
 * (`<nodeId>:<epoch>:<i>`) and reports each as an `emitted` event. `start`: `iterate` reads from the
 * first chunk; `result-first` starts the flight with `result()` and iterates only once it settled.
 */
export interface StreamCommand {
  id: number;
  op: 'stream';
  stage: string;
  key: string;
  callers: number;
  chunks: number;
  gapMs: number;
  onRestart: 'error' | 'restart';
  start: 'iterate' | 'result-first';
  /** Each caller stops reading (its client went away) after this many chunks. */
  stopAfter?: number;
  /** Callers pass `cancelWhenAbandoned`, and one that stops reading (`stopAfter`) aborts its signal. */
  cancelWhenAbandoned?: boolean;
  /** Each caller resumes: it already has `index` chunks of the run `epoch`. */
  after?: { epoch: number | undefined; index: number };
  /** The supplier holds before its chunk of this index until a `release` of the key. */
  holdAt?: number;
}

/** Lets a supplier held by `holdAt` (or `hold`) go on. */
export interface ReleaseCommand {
  op: 'release';
  key: string;
}

/** Suppliers held by `holdAt`, by key; a release that comes first lets the hold pass at once. */
const held = new Map<string, () => void>();
const released = new Set<string>();
/** Burst suppliers held by `hold`, by key (a key's later runs too); once the key is released, none holds. */
const heldRuns = new Map<string, (() => void)[]>();
const releasedRuns = new Set<string>();

/** What one streamed caller received: chunks, restart markers as `restart:<epoch>`, and how it ended. */
export interface StreamOutcome {
  ok: boolean;
  items: string[];
  role?: string;
  epoch?: number;
  code?: string;
  /** The code of the error's cause (a supplier's failure inside `E_FLIGHT_EXECUTION`). */
  cause?: string;
  /** Date.now() when the first chunk arrived. */
  firstAt?: number;
  /** Date.now() when the first restart marker arrived. */
  restartAt?: number;
  /** Date.now() when the call ended (its last chunk read, or its error). */
  endedAt?: number;
}

/** Forgets a flight cluster-wide (`flights.forget`); answers `{ id, forgotten }`. */
export interface ForgetCommand {
  id: number;
  op: 'forget';
  stage: string;
  key: string;
}

export interface CallOutcome {
  ok: boolean;
  value?: string;
  role?: string;
  epoch?: number;
  code?: string;
  errorType?: string;
  retryable?: boolean;
  /** The error's message, when the call failed. */
  message?: string;
  /** For a stale value: its age (ms). */
  ageMs?: number;
  /** How long the call took (ms). */
  tookMs?: number;
  /** When the call began (epoch ms, this machine's clock). */
  startedAt?: number;
}

const config = JSON.parse(process.env.FLIGHT_WORKER ?? '{}') as WorkerConfig;

/** Registers the OpenTelemetry SDK with an in-memory exporter (before the flight is created); returns the span reader. */
async function startTracing(): Promise<() => SpanSummary[]> {
  const { context, trace } = await import('@opentelemetry/api');
  const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
  const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
  const exporter = new InMemorySpanExporter();
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  return () =>
    exporter
      .getFinishedSpans()
      .filter((span) => span.name === 'flight.execute')
      .map((span) => ({
        role: String(span.attributes['flight.role'] ?? ''),
        epoch: span.attributes['flight.epoch'] as number | undefined,
        traceId: span.spanContext().traceId,
        spanId: span.spanContext().spanId,
        links: span.links.map((link) => link.context.spanId),
      }));
}
const readSpans = config.tracing ? await startTracing() : () => [];
const adapter = (await import(config.module)) as Record<string, (options: object) => FlightCoordinator>;

/** A cluster client of the adapter's own Redis library (resolved from the adapter package). */
async function clusterClient(nodes: { host: string; port: number }[]): Promise<object> {
  const library = await import(createRequire(config.module).resolve(config.adapter === 'ioredis' ? 'ioredis' : 'redis'));
  if (config.adapter === 'ioredis') return new library.Cluster(nodes);
  const client = library.createCluster({ rootNodes: nodes.map((n) => ({ url: `redis://${n.host}:${n.port}` })) });
  await client.connect();
  return client;
}
/** A client of the adapter's own Redis library that finds the primary through Sentinel. */
async function sentinelClient({ name, sentinels }: NonNullable<WorkerConfig['sentinel']>): Promise<object> {
  const library = await import(createRequire(config.module).resolve(config.adapter === 'ioredis' ? 'ioredis' : 'redis'));
  if (config.adapter === 'ioredis') {
    const client = new library.Redis({ name, sentinels });
    client.on('error', () => undefined); // the primary going away is the test's point; the coordinator reports it
    return client;
  }
  const client = library.createSentinel({ name, sentinelRootNodes: sentinels });
  // As for ioredis above: node-redis reports a broken connection as an 'error', which ends a process that has no listener.
  client.on('error', () => undefined);
  await client.connect();
  return client;
}
const connection = config.cluster
  ? { client: await clusterClient(config.cluster) }
  : config.sentinel
    ? { client: await sentinelClient(config.sentinel) }
    : config.adapter === 'ioredis'
      ? { redis: config.url }
      : { redis: { url: config.url } };
const coordinatorOptions = { ...connection, prefix: config.prefix, commandTimeoutMs: 1000, waitReplicas: config.waitReplicas };
const coordinator =
  config.adapter === 'ioredis'
    ? adapter.createIoredisCoordinator!(coordinatorOptions)
    : adapter.createNodeRedisCoordinator!(coordinatorOptions);

const flight = createSingleFlight({
  coordinator,
  mode: config.mode,
  nodeId: config.nodeId,
  fallbackCooldownMs: 200,
  defaults: {
    heartbeatIntervalMs: 500,
    takeoverAfterMs: 1200,
    pollIntervalMs: 200,
    l1: config.l1TtlMs ? { enabled: true, ttlMs: config.l1TtlMs } : { enabled: false },
    guard: { retry: false, timeoutMs: 0, circuitBreaker: false, bulkhead: false },
  },
  ...(config.stages ? { stages: config.stages } : {}),
});
// This process follows another's run of `key` (the test waits for every node to have joined before a fault).
flight.on('follower', (event) => process.stdout.write(`${JSON.stringify({ event: 'follower', key: event.key })}\n`));
// A forget heard through the coordinator, with this host's clock (the test compares it with its own).
flight.on('forgotten', (event) => process.stdout.write(`${JSON.stringify({ event: 'forgotten', key: event.key, at: Date.now() })}\n`));

let runs = 0;
const send = (message: object) => process.stdout.write(`${JSON.stringify(message)}\n`);

async function burst(command: BurstCommand): Promise<void> {
  const supplier = async (ctx: { epoch: number | undefined }) => {
    runs++;
    send({ event: 'running', epoch: ctx.epoch, key: command.key });
    if (command.behavior === 'hang') return new Promise<string>(() => undefined);
    if (command.hold && !releasedRuns.has(command.key)) {
      await new Promise<void>((resolve) => heldRuns.set(command.key, [...(heldRuns.get(command.key) ?? []), resolve]));
    }
    await sleep(command.delayMs);
    if (command.behavior === 'fail-hard') throw Object.assign(new Error('bad input'), { failureType: 'VALIDATION', code: 'E_BAD' });
    if (command.behavior === 'fail-soft') throw Object.assign(new Error('upstream 502'), { failureType: 'PROVIDER', code: 'E_502' });
    return `${command.value}@${config.nodeId}`;
  };
  const outcomes = await Promise.all(
    Array.from({ length: command.callers }, async (): Promise<CallOutcome> => {
      const startedAt = Date.now();
      try {
        const result = await flight.execute(command.stage, command.key, supplier, command.fresh ? { fresh: true } : {});
        const outcome: CallOutcome = {
          ok: true,
          value: result.value,
          role: result.role,
          epoch: result.epoch,
          tookMs: Date.now() - startedAt,
          startedAt,
        };
        if (result.ageMs !== undefined) outcome.ageMs = result.ageMs;
        return outcome;
      } catch (error) {
        const e = error as { code?: string; errorType?: string; retryable?: boolean; message?: string };
        return {
          ok: false,
          code: e.code,
          errorType: e.errorType,
          retryable: e.retryable,
          message: e.message,
          tookMs: Date.now() - startedAt,
          startedAt,
        };
      }
    }),
  );
  send({ id: command.id, outcomes, runs });
}

async function stream(command: StreamCommand): Promise<void> {
  const supplier = async function* (ctx: { epoch: number | undefined; signal: AbortSignal }) {
    runs++;
    send({ event: 'running', epoch: ctx.epoch, key: command.key });
    ctx.signal.addEventListener('abort', () =>
      send({ event: 'aborted', key: command.key, code: (ctx.signal.reason as { code?: string } | undefined)?.code }),
    );
    for (let i = 0; i < command.chunks; i++) {
      if (i === command.holdAt && !released.delete(command.key)) await new Promise<void>((resolve) => held.set(command.key, resolve));
      await sleep(command.gapMs);
      send({ event: 'emitted', key: command.key, n: i + 1, epoch: ctx.epoch });
      yield `${config.nodeId}:${ctx.epoch}:${i}`;
    }
  };
  const outcomes = await Promise.all(
    Array.from({ length: command.callers }, async (): Promise<StreamOutcome> => {
      const items: string[] = [];
      let firstAt: number | undefined;
      let restartAt: number | undefined;
      const leave = new AbortController();
      const call = flight.executeStream(command.stage, command.key, supplier, {
        onRestart: command.onRestart,
        ...(command.after ? { after: command.after } : {}),
        ...(command.cancelWhenAbandoned ? { cancelWhenAbandoned: true, signal: leave.signal } : {}),
      });
      try {
        if (command.start === 'result-first') await call.result();
        for await (const item of call) {
          firstAt ??= Date.now();
          if (item instanceof FlightStreamRestart) restartAt ??= Date.now();
          items.push(item instanceof FlightStreamRestart ? `restart:${item.epoch}` : item);
          send({ event: 'read', key: command.key, n: items.length });
          if (items.length === command.stopAfter) {
            leave.abort();
            return { ok: true, items, epoch: call.epoch, firstAt, restartAt, endedAt: Date.now() };
          }
        }
        const result = await call.result();
        return { ok: true, items, role: result.role, epoch: result.epoch, firstAt, restartAt, endedAt: Date.now() };
      } catch (error) {
        const { code, cause } = error as { code?: string; cause?: { code?: string } };
        return { ok: false, items, code, ...(cause?.code ? { cause: cause.code } : {}), firstAt, endedAt: Date.now() };
      }
    }),
  );
  send({ id: command.id, outcomes, runs });
}

send({ event: 'ready' });
for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line) as
    BurstCommand | StreamCommand | ForgetCommand | ReleaseCommand | { op: 'exit' } | { op: 'spans'; id: number };
  if (command.op === 'exit') break;
  if (command.op === 'stream') void stream(command);
  else if (command.op === 'release') {
    releasedRuns.add(command.key);
    for (const resume of heldRuns.get(command.key) ?? []) resume();
    heldRuns.delete(command.key);
    const release = held.get(command.key);
    if (release) {
      held.delete(command.key);
      release();
    } else released.add(command.key);
  } else if (command.op === 'spans') send({ id: command.id, spans: readSpans() });
  else if (command.op === 'forget') {
    flight.forget(command.stage, command.key).then(
      (forgotten) => send({ id: command.id, forgotten }),
      (error: unknown) => send({ id: command.id, error: String(error) }),
    );
  } else void burst(command);
}
await flight.close();
await coordinator.close();
process.exit(0);
