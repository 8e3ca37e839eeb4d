/**
 * A captured response, the rules deciding whether it may be shared, and the JSON-safe shape in
 * which it travels through the coordinator (headers filtered by the allow-list, body as base64).
 */
import type { OutgoingHttpHeaders } from 'node:http';
import { UnshareableResponse } from './errors.js';
import type { ResolvedHttpFlightOptions } from './options.js';

type SharingOptionKeys = 'shareStatus' | 'vary' | 'maxBodyBytes' | 'replayHeaders';

/** What the owner's handler produced, with every header (the owner gets all of them). */
export interface CapturedResponse {
  status: number;
  headers: OutgoingHttpHeaders;
  body: Buffer;
}

/** The shared form of a response: JSON-serializable, stored by the coordinator, replayed to followers. */
export interface SharedResponse {
  v: 1;
  status: number;
  /** Allow-listed headers, lower-case names, one entry per value. */
  headers: [string, string][];
  /** The body, base64. Empty for HEAD. */
  body: string;
  /** HEAD only: the `Content-Length` the owner declared. */
  length?: number;
  /** Idempotency mode: fingerprint of the method, path and body that produced it. */
  fp?: string;
}

function headerValues(value: OutgoingHttpHeaders[string]): string[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value.map(String) : [String(value)];
}

function header(headers: OutgoingHttpHeaders, name: string): string {
  return headerValues(headers[name]).join(', ');
}

/** Comma-separated tokens of a header, lower-case, without parameters. */
function tokens(value: string): string[] {
  return value
    .split(',')
    .map((token) => token.split('=')[0]!.trim().toLowerCase())
    .filter(Boolean);
}

/** Why `response` must not be shared, or `undefined` when it may be. */
export function unshareableReason(response: CapturedResponse, options: Pick<ResolvedHttpFlightOptions<unknown>, SharingOptionKeys>): UnshareableResponse | undefined {
  if (!options.shareStatus(response.status)) return new UnshareableResponse('status', response.status);
  const cacheControl = tokens(header(response.headers, 'cache-control'));
  if (cacheControl.includes('private') || cacheControl.includes('no-store')) return new UnshareableResponse('private', response.status);
  const vary = tokens(header(response.headers, 'vary'));
  if (vary.some((name) => name === '*' || !options.vary.includes(name))) return new UnshareableResponse('vary', response.status);
  if (response.body.length > options.maxBodyBytes) return new UnshareableResponse('too-large', response.status);
  return undefined;
}

/** The shared form of a response: allow-listed headers only, body as base64. */
export function toShared(
  response: CapturedResponse,
  options: Pick<ResolvedHttpFlightOptions<unknown>, SharingOptionKeys>,
  method: string,
  fingerprint?: string,
): SharedResponse {
  const headers: [string, string][] = [];
  for (const [rawName, value] of Object.entries(response.headers)) {
    const name = rawName.toLowerCase();
    if (!options.replayHeaders.has(name)) continue;
    for (const item of headerValues(value)) headers.push([name, item]);
  }
  const shared: SharedResponse = { v: 1, status: response.status, headers, body: '' };
  if (method === 'HEAD') {
    const length = Number(header(response.headers, 'content-length'));
    if (Number.isSafeInteger(length) && length >= 0) shared.length = length;
  } else {
    shared.body = response.body.toString('base64');
  }
  if (fingerprint !== undefined) shared.fp = fingerprint;
  return shared;
}

/** Checks that a value read back from the coordinator is a shared response. */
export function isSharedResponse(value: unknown): value is SharedResponse {
  const v = value as SharedResponse | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    v.v === 1 &&
    Number.isInteger(v.status) &&
    Array.isArray(v.headers) &&
    v.headers.every((h) => Array.isArray(h) && h.length === 2 && typeof h[0] === 'string' && typeof h[1] === 'string') &&
    typeof v.body === 'string'
  );
}

/** The body bytes of a shared response. */
export function sharedBody(response: SharedResponse): Buffer {
  return Buffer.from(response.body, 'base64');
}
