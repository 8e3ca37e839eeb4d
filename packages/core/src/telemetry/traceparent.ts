/**
 * W3C Trace Context `traceparent` strings: how an owner's span context is stored with its flight and read
 * back by followers on any node (https://www.w3.org/TR/trace-context/#traceparent-header).
 */

/** The parts of a span context a `traceparent` carries. */
export interface TraceparentParts {
  traceId: string;
  spanId: string;
  traceFlags: number;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE_ID = '0'.repeat(32);
const ZERO_SPAN_ID = '0'.repeat(16);

/** Formats a span context as a version-00 `traceparent`. */
export function formatTraceparent(parts: TraceparentParts): string {
  return `00-${parts.traceId}-${parts.spanId}-${(parts.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/**
 * Parses a `traceparent`, or returns undefined for anything invalid (stored data is never trusted to be
 * well-formed): version `ff`, all-zero ids, upper-case hex, or a version-00 value with extra fields.
 */
export function parseTraceparent(value: unknown): TraceparentParts | undefined {
  if (typeof value !== 'string') return undefined;
  const match = TRACEPARENT.exec(value);
  if (!match) return undefined;
  const [, version, traceId, spanId, flags, rest] = match;
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (traceId === ZERO_TRACE_ID || spanId === ZERO_SPAN_ID) return undefined;
  return { traceId: traceId!, spanId: spanId!, traceFlags: Number.parseInt(flags!, 16) };
}
