/**
 * The library's metrics through the OpenTelemetry API (README "Metrics"). Names follow OpenTelemetry's
 * conventions: dot-separated, no unit in the name (durations are histograms in seconds), counters without a
 * `total` suffix; an exporter adds its own (`flight.execute.duration` becomes
 * `flight_execute_duration_seconds` in Prometheus, `flight.executions` becomes `flight_executions_total`).
 * Attributes are low-cardinality: the stage, the role, the outcome, the error's type, how a wait ended;
 * never a key. The meter is taken from the global meter provider at the first `execute`, so an SDK
 * registered before it receives the instruments; when none is (the API's no-op meter), nothing is
 * recorded and calls do no metric work at all. A meter that throws never fails a call.
 */
import type { Attributes, Counter, Histogram, Meter } from '@opentelemetry/api';
import type { FlightEventMap } from '../events/types.js';
import type { FlightLogger } from '../ports/logger.js';

/** The metric names (as the OpenTelemetry API sees them). */
export const FLIGHT_METRICS = {
  /** Histogram (s): time to answer an `execute`, by stage, role, outcome and error type. */
  executeDuration: 'flight.execute.duration',
  /** Counter: finished `execute` calls, by stage, role and outcome. */
  executions: 'flight.executions',
  /** Histogram (s): how long a caller waited for another node's run, by stage and how the wait ended. */
  waitDuration: 'flight.wait.duration',
  /** Counter: supplier runs on this node (upstream calls, retries included), by stage and role. */
  supplierRuns: 'flight.supplier.runs',
  /** Counter: successful calls answered without running the supplier (followers, replays, L1 hits, callers that joined a run in-process), by stage and role. */
  upstreamSaved: 'flight.upstream.saved',
  /** Counter: runs this node took over from a dead, stuck or failed owner, by stage. */
  takeovers: 'flight.takeovers',
  /** Counter: calls served in-process because the coordinator failed (hybrid mode), by stage. */
  fallbacks: 'flight.fallbacks',
  /** Counter: calls answered from the node-local L1 replay cache, by stage. */
  l1Hits: 'flight.l1.hits',
  /** Counter: chunks produced by this node's streamed runs, by stage. */
  streamChunks: 'flight.stream.chunks',
  /** Counter: refreshes of a stale value that failed on this node (the stage option `stale`), by stage and error type. */
  refreshFailures: 'flight.refresh.failures',
} as const;

/** Bucket bounds (s) of the duration histograms: from a replay (sub-millisecond) to a long model call. */
export const DURATION_BUCKETS_S = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** One finished `execute`, as recorded. */
export interface ExecutionRecord {
  stage: string;
  role: string;
  durationMs: number;
  /** The caller got the value without running the supplier. */
  saved: boolean;
  /** `error.type` of a failed call; undefined when it succeeded. */
  errorType: string | undefined;
}

interface Instruments {
  executeDuration: Histogram;
  executions: Counter;
  waitDuration: Histogram;
  supplierRuns: Counter;
  upstreamSaved: Counter;
  takeovers: Counter;
  fallbacks: Counter;
  l1Hits: Counter;
  streamChunks: Counter;
  refreshFailures: Counter;
}

function createInstruments(meter: Meter): Instruments {
  const advice = { explicitBucketBoundaries: DURATION_BUCKETS_S };
  return {
    executeDuration: meter.createHistogram(FLIGHT_METRICS.executeDuration, {
      description: 'Time to answer an execute call',
      unit: 's',
      advice,
    }),
    executions: meter.createCounter(FLIGHT_METRICS.executions, { description: 'Finished execute calls', unit: '{execution}' }),
    waitDuration: meter.createHistogram(FLIGHT_METRICS.waitDuration, {
      description: "Time a caller waited for another node's run",
      unit: 's',
      advice,
    }),
    supplierRuns: meter.createCounter(FLIGHT_METRICS.supplierRuns, { description: 'Supplier runs (upstream calls)', unit: '{run}' }),
    upstreamSaved: meter.createCounter(FLIGHT_METRICS.upstreamSaved, {
      description: 'Calls answered without running the supplier',
      unit: '{call}',
    }),
    takeovers: meter.createCounter(FLIGHT_METRICS.takeovers, { description: 'Runs taken over from another owner', unit: '{takeover}' }),
    fallbacks: meter.createCounter(FLIGHT_METRICS.fallbacks, {
      description: 'Calls served in-process because the coordinator failed',
      unit: '{call}',
    }),
    l1Hits: meter.createCounter(FLIGHT_METRICS.l1Hits, { description: 'Calls answered from the node-local L1 cache', unit: '{call}' }),
    streamChunks: meter.createCounter(FLIGHT_METRICS.streamChunks, { description: 'Chunks produced by streamed runs', unit: '{chunk}' }),
    refreshFailures: meter.createCounter(FLIGHT_METRICS.refreshFailures, {
      description: 'Refreshes of a stale value that failed',
      unit: '{refresh}',
    }),
  };
}

/** Where the meter comes from: the global provider's, and whether a meter is the API's no-op one. */
export interface MeterSource {
  meter(): Meter;
  isNoop(meter: Meter): boolean;
}

/** The metrics of one SingleFlight instance. Every method never throws. */
export class FlightMetrics {
  private instruments: Instruments | undefined;
  private resolved = false;

  constructor(
    private readonly source: MeterSource,
    private readonly logger: FlightLogger,
  ) {}

  /**
   * Whether a meter provider records these metrics: resolved at the first call, for the instance's life.
   * Callers record only when it is true.
   */
  get live(): boolean {
    if (!this.resolved) {
      this.resolved = true;
      try {
        const meter = this.source.meter();
        if (!this.source.isNoop(meter)) this.instruments = createInstruments(meter);
      } catch (error) {
        this.logger.warn({ err: error }, 'could not create the metrics; none are recorded');
      }
    }
    return this.instruments !== undefined;
  }

  private use(what: string, record: (instruments: Instruments) => void): void {
    if (!this.instruments) return;
    try {
      record(this.instruments);
    } catch (error) {
      this.logger.warn({ err: error }, `could not record ${what}`);
    }
  }

  execution({ stage, role, durationMs, saved, errorType }: ExecutionRecord): void {
    this.use('the execution', (m) => {
      const outcome = errorType === undefined ? 'success' : 'failure';
      const counted: Attributes = { 'flight.stage': stage, 'flight.role': role, 'flight.outcome': outcome };
      m.executions.add(1, counted);
      m.executeDuration.record(durationMs / 1000, errorType === undefined ? counted : { ...counted, 'error.type': errorType });
      if (saved) m.upstreamSaved.add(1, { 'flight.stage': stage, 'flight.role': role });
      if (role === 'l1') m.l1Hits.add(1, { 'flight.stage': stage });
    });
  }

  waited({ stage, waitedMs, woken }: FlightEventMap['waited']): void {
    this.use('the wait', (m) => m.waitDuration.record(waitedMs / 1000, { 'flight.stage': stage, 'flight.wake': woken }));
  }

  supplierRun({ stage, role }: FlightEventMap['run']): void {
    this.use('the supplier run', (m) => m.supplierRuns.add(1, { 'flight.stage': stage, 'flight.role': role }));
  }

  takeover({ stage }: FlightEventMap['takeover']): void {
    this.use('the takeover', (m) => m.takeovers.add(1, { 'flight.stage': stage }));
  }

  fallback({ stage }: FlightEventMap['fallback']): void {
    this.use('the fallback', (m) => m.fallbacks.add(1, { 'flight.stage': stage }));
  }

  refreshFailed({ stage, errorType }: FlightEventMap['refresh-failed']): void {
    this.use('the failed refresh', (m) => m.refreshFailures.add(1, { 'flight.stage': stage, 'error.type': errorType }));
  }

  streamChunks(stage: string, chunks: number): void {
    if (chunks > 0) this.use('the stream chunks', (m) => m.streamChunks.add(chunks, { 'flight.stage': stage }));
  }
}
