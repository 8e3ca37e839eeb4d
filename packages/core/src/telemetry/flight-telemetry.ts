/**
 * Spans and metrics of `execute` through the OpenTelemetry API (see README "Tracing and metrics").
 *
 * One span `flight.execute` (kind INTERNAL) per call, with `flight.*` attributes; a caller that did not
 * run the supplier links its span to the owner's span (stored with the flight as a W3C `traceparent`).
 * The metrics are flight-metrics.ts. Without an SDK registered the API answers with no-op spans: `start`
 * then returns undefined and the call does no tracing work beyond that check. A telemetry SDK that throws
 * never fails a call: the error is logged and the call goes on unreported.
 */
import type { Attributes, Span, Tracer } from '@opentelemetry/api';
import type { FlightLogger } from '../ports/logger.js';
import { FlightMetrics } from './flight-metrics.js';
import { INSTRUMENTATION_NAME, loadOtelApi, type ModuleLoader, type OtelApi } from './otel-api.js';
import { formatTraceparent, parseTraceparent } from './traceparent.js';

/** Span name of every `execute`. */
export const EXECUTE_SPAN_NAME = 'flight.execute';

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

/**
 * The `error.type` of a failed call. A run's failure names its own code (`FlightExecutionError.errorCode`:
 * what the supplier threw, a provider's code, E_UNEXPECTED) under the wrapper's; that is the type worth
 * grouping by. Then the error's `code`, its `name`, or `_OTHER`.
 */
export function errorTypeOf(error: unknown): string {
  const e = error as { code?: unknown; errorCode?: unknown; name?: unknown } | null | undefined;
  if (typeof e?.errorCode === 'string' && e.errorCode !== '') return e.errorCode;
  if (typeof e?.code === 'string') return e.code;
  if (typeof e?.name === 'string') return e.name;
  return '_OTHER';
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
      const error = end.error as { message?: unknown } | null;
      const type = errorTypeOf(end.error);
      attributes['error.type'] = type;
      if (end.error instanceof Error) this.span.recordException(end.error);
      this.span.setStatus({ code: STATUS_ERROR, message: typeof error?.message === 'string' ? error.message : undefined });
    }
    this.span.setAttributes(attributes);
    this.span.end();
  }
}

/** The tracer and metrics of one SingleFlight instance, obtained from the global providers on first use. */
export class FlightTelemetry {
  private tracer: Tracer | undefined;
  readonly metrics: FlightMetrics;

  private constructor(
    private readonly api: OtelApi,
    private readonly version: string | undefined,
    private readonly logger: FlightLogger,
  ) {
    const noopMeter = api.createNoopMeter().constructor;
    this.metrics = new FlightMetrics(
      { meter: () => api.metrics.getMeter(INSTRUMENTATION_NAME, version), isNoop: (meter) => meter instanceof noopMeter },
      logger,
    );
  }

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
}
