/**
 * Spans and counters of `execute` through the OpenTelemetry API (see README "Tracing and metrics").
 *
 * One span `flight.execute` (kind INTERNAL) per call, with `flight.*` attributes; a caller that did not
 * run the supplier links its span to the owner's span (stored with the flight as a W3C `traceparent`).
 * One counter `flight.executions` by stage, role and outcome. Without an SDK registered the API answers
 * with no-op spans: `start` then returns undefined and the call does no tracing work beyond that check.
 * A telemetry SDK that throws never fails a call: the error is logged and the call goes on unreported.
 */
import type { Attributes, Counter, Span, Tracer } from '@opentelemetry/api';
import type { FlightLogger } from '../ports/logger.js';
import { INSTRUMENTATION_NAME, loadOtelApi, type ModuleLoader, type OtelApi } from './otel-api.js';
import { formatTraceparent, parseTraceparent } from './traceparent.js';

/** Span name of every `execute`. */
export const EXECUTE_SPAN_NAME = 'flight.execute';
/** Counter of finished `execute` calls. */
export const EXECUTIONS_COUNTER_NAME = 'flight.executions';

/** `SpanKind.INTERNAL` and `SpanStatusCode.ERROR` of the API (stable numeric values). */
const SPAN_KIND_INTERNAL = 0;
const STATUS_ERROR = 2;

/**
 * What a call learned about who did the work, filled in by the run that talked to the coordinator (the
 * in-process leader) and shared with the callers that joined it on this node.
 */
export interface TraceNote {
  /** This call's own span, as passed to `acquire`. */
  traceparent?: string | undefined;
  /** The span that ran (or is running) the supplier: this call's own when it owned the run. */
  ownerTraceparent?: string | undefined;
  /** The role decided by the coordinator, also when the call then fails. */
  role?: string | undefined;
  epoch?: number | undefined;
  /** Time spent waiting for another node's owner. */
  waitedMs?: number | undefined;
}

/** How an `execute` call ended, as recorded on its span. */
export interface ExecuteEnd {
  role: string;
  shared: boolean;
  epoch?: number | undefined;
  waitedMs?: number | undefined;
  /** Span to link to as the one that did the work (ignored when it is this span). */
  ownerTraceparent?: string | undefined;
  error?: unknown;
}

/** A recording `flight.execute` span. */
export class ExecuteSpan {
  /** W3C `traceparent` of this span. */
  readonly traceparent: string;

  constructor(
    private readonly api: OtelApi,
    private readonly span: Span,
    private readonly logger: FlightLogger,
  ) {
    this.traceparent = formatTraceparent(span.spanContext());
  }

  /** Runs `fn` with this span active, so spans the supplier starts are its children. */
  activate<T>(fn: () => T): T {
    const { context, trace } = this.api;
    return context.with(trace.setSpan(context.active(), this.span), fn);
  }

  /** Sets the attributes, links the owner's span, records the error and ends the span. Never throws. */
  end(end: ExecuteEnd): void {
    try {
      this.record(end);
    } catch (error) {
      this.logger.warn({ err: error }, 'could not record the flight.execute span');
    }
  }

  private record(end: ExecuteEnd): void {
    const attributes: Attributes = {
      'flight.role': end.role,
      'flight.shared': end.shared,
      'flight.outcome': end.error === undefined ? 'success' : 'failure',
    };
    if (end.epoch !== undefined) attributes['flight.epoch'] = end.epoch;
    if (end.waitedMs !== undefined) attributes['flight.waited_ms'] = end.waitedMs;
    const owner = end.ownerTraceparent === this.traceparent ? undefined : parseTraceparent(end.ownerTraceparent);
    if (owner) {
      this.span.addLink({ context: { ...owner, isRemote: true }, attributes: { 'flight.link': 'owner' } });
    }
    if (end.error !== undefined) {
      const error = end.error as { code?: unknown; errorCode?: unknown; message?: unknown; name?: unknown } | null;
      // A run's failure names its own code (`FlightExecutionError.errorCode`: what the supplier threw, a
      // provider's code, E_UNEXPECTED) under the wrapper's; that is the type worth grouping by.
      const type =
        typeof error?.errorCode === 'string' && error.errorCode !== ''
          ? error.errorCode
          : typeof error?.code === 'string'
            ? error.code
            : typeof error?.name === 'string'
              ? error.name
              : '_OTHER';
      attributes['error.type'] = type;
      if (end.error instanceof Error) this.span.recordException(end.error);
      this.span.setStatus({ code: STATUS_ERROR, message: typeof error?.message === 'string' ? error.message : undefined });
    }
    this.span.setAttributes(attributes);
    this.span.end();
  }
}

/** The tracer and counter of one SingleFlight instance, obtained from the global providers on first use. */
export class FlightTelemetry {
  private tracer: Tracer | undefined;
  private counter: Counter | undefined;

  private constructor(
    private readonly api: OtelApi,
    private readonly version: string | undefined,
    private readonly logger: FlightLogger,
  ) {}

  /** Telemetry through the OpenTelemetry API, or undefined when it is turned off or not installed. */
  static create(enabled: boolean, logger: FlightLogger, load?: ModuleLoader): FlightTelemetry | undefined {
    if (!enabled) return undefined;
    const { api, version } = loadOtelApi(load);
    return api ? new FlightTelemetry(api, version, logger) : undefined;
  }

  /** Starts the span of one `execute`; undefined when nothing records it (no SDK, or not sampled). Never throws. */
  start(stage: string): ExecuteSpan | undefined {
    try {
      this.tracer ??= this.api.trace.getTracer(INSTRUMENTATION_NAME, this.version);
      const span = this.tracer.startSpan(EXECUTE_SPAN_NAME, { kind: SPAN_KIND_INTERNAL, attributes: { 'flight.stage': stage } });
      if (span.isRecording()) return new ExecuteSpan(this.api, span, this.logger);
      span.end();
    } catch (error) {
      this.logger.warn({ stage, err: error }, 'could not start the flight.execute span');
    }
    return undefined;
  }

  /** Counts one finished `execute`. Never throws. */
  count(stage: string, role: string, ok: boolean): void {
    try {
      this.counter ??= this.api.metrics.getMeter(INSTRUMENTATION_NAME, this.version).createCounter(EXECUTIONS_COUNTER_NAME, {
        description: 'Finished execute calls, by stage, role and outcome',
        unit: '{execution}',
      });
      this.counter.add(1, { 'flight.stage': stage, 'flight.role': role, 'flight.outcome': ok ? 'success' : 'failure' });
    } catch (error) {
      this.logger.warn({ stage, err: error }, 'could not count the execution');
    }
  }
}
