/**
 * The span active where a binding receives a request: with OpenTelemetry's HTTP instrumentation, the
 * framework's server span. A binding captures it when the request arrives (later, the supplier runs
 * under the `flight.execute` span) and sets what @flight decided on it, such as `flight.role`.
 */
import { loadOtelApi } from './otel-api.js';

/** The part of a span a binding writes to. */
export interface SpanHandle {
  setAttribute(key: string, value: string | number | boolean): unknown;
}

/** The recording span active now, or undefined (no OpenTelemetry API, no SDK, nothing active). Never throws. */
export function activeSpan(): SpanHandle | undefined {
  const { api } = loadOtelApi();
  if (!api) return undefined;
  try {
    const span = api.trace.getActiveSpan();
    return span?.isRecording() ? span : undefined;
  } catch {
    return undefined;
  }
}
