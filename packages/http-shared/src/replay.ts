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

/**
 * Calls `set` once per shared header name with its value (repeated headers as an array), in order. The shared
 * form keeps the values of one name together, so this needs no map for the usual few headers.
 */
export function eachSharedHeader(response: SharedResponse, set: (name: string, value: string | string[]) => void): void {
  const { headers } = response;
  for (let i = 0; i < headers.length;) {
    const name = headers[i]![0];
    let end = i + 1;
    while (end < headers.length && headers[end]![0] === name) end++;
    for (let k = end; k < headers.length; k++) {
      // A name seen again further on (not produced by toShared): group everything the slow way.
      if (headers[k]![0] === name) {
        for (const [grouped, value] of groupedHeaders(response)) set(grouped, value);
        return;
      }
    }
    set(name, end - i === 1 ? headers[i]![1] : headers.slice(i, end).map((header) => header[1]));
    i = end;
  }
}

/** The HTTP status an error thrown by a handler is answered with (its `status`/`statusCode`, else 500). */
export function errorStatus(error: unknown): number {
  const e = error as { status?: unknown; statusCode?: unknown } | null;
  const status = e?.status ?? e?.statusCode;
  return typeof status === 'number' && Number.isInteger(status) && status >= 400 && status <= 599 ? status : 500;
}
