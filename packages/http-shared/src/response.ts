/**
 * A captured response, the rules deciding whether it may be shared, and the JSON-safe shape in
 * which it travels through the coordinator (headers filtered by the allow-list; the body as text when it
 * is valid UTF-8, base64 only when it is binary — so it is base64-encoded at most once on its way).
 */
import { isUtf8 } from 'node:buffer';
import type { OutgoingHttpHeaders } from 'node:http';
import { UnshareableResponse, type UnshareableOutcome, type UnshareableReason } from './errors.js';
import { freshnessOf } from './freshness.js';
import { header, headerValues, tokens } from './response-headers.js';
import type { ResolvedHttpFlightOptions } from './options.js';

type SharingOptionKeys = 'shareStatus' | 'vary' | 'maxBodyBytes' | 'replayHeaders';

/** What the owner's handler produced, with every header (the owner gets all of them). */
export interface CapturedResponse {
  status: number;
  headers: OutgoingHttpHeaders;
  /** The bytes, or the UTF-8 text the handler wrote as a string. */
  body: Buffer | string;
}

/** The size of a captured body in bytes. */
export function bodyLength(body: Buffer | string): number {
  return typeof body === 'string' ? Buffer.byteLength(body) : body.length;
}

/** The shared form of a response: JSON-serializable, stored by the coordinator, replayed to followers. */
export interface SharedResponse {
  /** 2: `body` is text unless `b64`; 1 (older nodes): `body` is always base64. */
  v: 1 | 2;
  status: number;
  /** Allow-listed headers, lower-case names, one entry per value. */
  headers: [string, string][];
  /** The body: its UTF-8 text, or base64 when `b64` is set (a binary body). Empty for HEAD. */
  body: string;
  /** The body is base64 (it was not valid UTF-8). */
  b64?: 1;
  /** HEAD only: the `Content-Length` the owner declared. */
  length?: number;
  /** Idempotency mode: fingerprint of the method, path and body that produced it. */
  fp?: string;
  /** Coalesced requests: when the owner's handler produced it (epoch ms), for the `Age` of replays (freshness.ts). */
  at?: number;
  /** Its age then, in seconds, when above 0. */
  age?: number;
  /** How long after `at` it may be replayed (ms); absent when the response states no freshness. */
  fresh?: number;
}

function refuse(reason: UnshareableReason, response: CapturedResponse): UnshareableResponse {
  return new UnshareableResponse(reason, response.status);
}

/** Why `response` must not be shared, or `undefined` when it may be. */
export function unshareableReason(
  response: CapturedResponse,
  options: Pick<ResolvedHttpFlightOptions<unknown>, SharingOptionKeys>,
): UnshareableResponse | undefined {
  if (!options.shareStatus(response.status)) return refuse('status', response);
  const cacheControl = response.headers['cache-control'];
  if (cacheControl !== undefined) {
    const directives = tokens(header(response.headers, 'cache-control'));
    if (directives.includes('private') || directives.includes('no-store')) return refuse('private', response);
  }
  if (response.headers.vary !== undefined) {
    const vary = tokens(header(response.headers, 'vary'));
    if (vary.some((name) => name === '*' || !options.vary.includes(name))) return refuse('vary', response);
  }
  if (bodyLength(response.body) > options.maxBodyBytes) return refuse('too-large', response);
  return undefined;
}

/** The shared form of a response: allow-listed headers only, body as text (base64 when binary). */
export function toShared(
  response: CapturedResponse,
  options: Pick<ResolvedHttpFlightOptions<unknown>, SharingOptionKeys>,
  method: string,
  fingerprint?: string,
): SharedResponse {
  const headers: [string, string][] = [];
  const captured = response.headers;
  for (const rawName in captured) {
    const name = rawName.toLowerCase();
    if (!options.replayHeaders.has(name)) continue;
    const value = captured[rawName];
    if (typeof value === 'string') headers.push([name, value]);
    else for (const item of headerValues(value)) headers.push([name, item]);
  }
  const shared: SharedResponse = { v: 2, status: response.status, headers, body: '' };
  if (method === 'HEAD') {
    const length = Number(header(response.headers, 'content-length'));
    if (Number.isSafeInteger(length) && length >= 0) shared.length = length;
  } else if (typeof response.body === 'string') {
    shared.body = response.body;
  } else if (isUtf8(response.body)) {
    shared.body = response.body.toString('utf8');
  } else {
    shared.body = response.body.toString('base64');
    shared.b64 = 1;
  }
  if (fingerprint !== undefined) shared.fp = fingerprint;
  // Replays of an idempotent request are its record, not a cache's copy: freshness does not apply.
  else Object.assign(shared, freshnessOf(response));
  return shared;
}

/**
 * An idempotent request's outcome that is not a response to replay (its response could not be shared):
 * the value its flight records, so that every later caller with the key learns it, typed, instead of
 * running the handler a second time.
 */
export interface UnsharedOutcome {
  v: 2;
  unshared: UnshareableOutcome;
  /** The fingerprint of the request that produced it. */
  fp?: string;
}

/** What an HTTP flight's value is: a response to replay, or (idempotency mode) an outcome that is not one. */
export type HttpFlightValue = SharedResponse | UnsharedOutcome;

/** The value an idempotent request records when its response cannot be shared. */
export function unsharedOutcome(refused: UnshareableResponse, fingerprint: string | undefined): UnsharedOutcome {
  const outcome: UnsharedOutcome = { v: 2, unshared: refused.outcome };
  if (fingerprint !== undefined) outcome.fp = fingerprint;
  return outcome;
}

/** Checks that a value read back from the coordinator is a shared response. */
export function isSharedResponse(value: unknown): value is SharedResponse {
  const v = value as SharedResponse | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    (v.v === 2 || v.v === 1) &&
    Number.isInteger(v.status) &&
    Array.isArray(v.headers) &&
    v.headers.every((h) => Array.isArray(h) && h.length === 2 && typeof h[0] === 'string' && typeof h[1] === 'string') &&
    typeof v.body === 'string'
  );
}

/** Checks that a value read back from the coordinator is an unshared outcome. */
export function isUnsharedOutcome(value: unknown): value is UnsharedOutcome {
  const v = value as UnsharedOutcome | null;
  if (typeof v !== 'object' || v === null || v.v !== 2 || typeof v.unshared !== 'object' || v.unshared === null) return false;
  const { reason } = v.unshared as { reason?: unknown; status?: unknown };
  if (reason === 'status') return Number.isInteger((v.unshared as { status?: unknown }).status);
  return reason === 'timeout' || reason === 'other';
}

/** The body of a shared response to send: its text as is (no copy) unless it travels as base64. */
export function sharedPayload(response: SharedResponse): string | Buffer {
  return response.v === 1 || response.b64 ? Buffer.from(response.body, 'base64') : response.body;
}

/** The body bytes of a shared response. */
export function sharedBody(response: SharedResponse): Buffer {
  return Buffer.from(response.body, response.v === 1 || response.b64 ? 'base64' : 'utf8');
}
