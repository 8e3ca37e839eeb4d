/**
 * What the AI SDK's values become on their way through Redis, and back: plain JSON with the few non-JSON
 * values a call's options, result or stream parts hold tagged — a `Date` (a response's timestamp), bytes
 * (a file's data) and a `URL` (a file part's link) — so every caller gets them as the types they were.
 */
import type { StreamJson } from '@flight/core';

const DATE = '$flight.date';
const BYTES = '$flight.bytes';
const URL_TAG = '$flight.url';

/** Plain JSON for `value`, or undefined when it holds something else (a function, a class instance, a cycle). */
export function toWireJson(value: unknown, depth = 0): StreamJson | undefined {
  if (depth > 64) return undefined;
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (value instanceof Date) return { [DATE]: value.toISOString() };
  if (value instanceof Uint8Array) return { [BYTES]: Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64') };
  if (value instanceof URL) return { [URL_TAG]: value.href };
  if (Array.isArray(value)) {
    const items: StreamJson[] = [];
    for (const item of value) {
      const json = item === undefined ? null : toWireJson(item, depth + 1);
      if (json === undefined) return undefined;
      items.push(json);
    }
    return items;
  }
  if (typeof value !== 'object') return undefined;
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return undefined;
  const fields: Record<string, StreamJson> = {};
  for (const [name, item] of Object.entries(value)) {
    if (item === undefined) continue;
    const json = toWireJson(item, depth + 1);
    if (json === undefined) return undefined;
    fields[name] = json;
  }
  return fields;
}

/** The value `toWireJson` encoded. */
export function fromWireJson(json: StreamJson): unknown {
  if (json === null || typeof json !== 'object') return json;
  if (Array.isArray(json)) return json.map(fromWireJson);
  const keys = Object.keys(json);
  if (keys.length === 1) {
    const tagged = json[keys[0]!];
    if (keys[0] === DATE && typeof tagged === 'string') return new Date(tagged);
    if (keys[0] === BYTES && typeof tagged === 'string') return new Uint8Array(Buffer.from(tagged, 'base64'));
    if (keys[0] === URL_TAG && typeof tagged === 'string') return new URL(tagged);
  }
  const value: Record<string, unknown> = {};
  for (const key of keys) value[key] = fromWireJson(json[key]!);
  return value;
}
