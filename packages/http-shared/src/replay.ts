/** Helpers shared by the adapters' replay paths. */
import type { SharedResponse } from './response.js';

/** The shared headers grouped by name (repeated headers as arrays). */
export function groupedHeaders(response: SharedResponse): Map<string, string | string[]> {
  const grouped = new Map<string, string | string[]>();
  for (const [name, value] of response.headers) {
    const current = grouped.get(name);
    grouped.set(name, current === undefined ? value : Array.isArray(current) ? [...current, value] : [current, value]);
  }
  return grouped;
}

/** The HTTP status an error thrown by a handler is answered with (its `status`/`statusCode`, else 500). */
export function errorStatus(error: unknown): number {
  const e = error as { status?: unknown; statusCode?: unknown } | null;
  const status = e?.status ?? e?.statusCode;
  return typeof status === 'number' && Number.isInteger(status) && status >= 400 && status <= 599 ? status : 500;
}
