/**
 * How long a shared response may be replayed after its run, by RFC 9111's rules for a shared cache
 * (read by `http-cache-semantics`), the `Age` a replay carries, and how long past that it may still be
 * served stale (RFC 5861's `stale-while-revalidate` and `stale-if-error`: core's stale values).
 *
 * Callers that join a run get its response whatever it says (that is collapsing, not caching). After the
 * run, a response that states its freshness (`Cache-Control` `s-maxage`, `max-age` or `no-cache`, or
 * `Expires`) is replayed only while it is fresh; one that states nothing is replayed for the stage's
 * `resultTtlMs`, the operator's choice. The stored copy lives its freshness plus `JOIN_GRACE_MS`, so the
 * callers that joined the run on other nodes can still read it; a request that meets it in that grace
 * waits for it to go and joins the next run.
 */
import CachePolicy from 'http-cache-semantics';
import type { OutgoingHttpHeaders } from 'node:http';
import { directiveSeconds, header, tokens } from './response-headers.js';

/** How long a stored response outlives its freshness, for the callers that joined its run to read it (ms). */
export const JOIN_GRACE_MS = 500;

/** The freshness a shared response carries: when it was produced, its age then, how long it stays fresh. */
export interface Freshness {
  /** When the owner's handler produced it (epoch ms, the owner's clock). */
  at: number;
  /** Its age then, in seconds (an `Age` it came with, or a `Date` in the past), when above 0. */
  age?: number;
  /** How long after `at` it may be replayed (ms); absent when the response states no freshness. */
  fresh?: number;
  /** Its `stale-while-revalidate` (s): how long past `fresh` it may be served while one refresh runs. */
  revalidate?: number;
  /** Its `stale-if-error` (s): how long past `fresh` it may be served in place of a failed refresh. */
  ifError?: number;
}

/** Directives under which a stale response may not be served without revalidation (RFC 9111 §5.2.2). */
const NO_STALE_DIRECTIVES = new Set(['must-revalidate', 'proxy-revalidate', 'no-cache']);

const FRESHNESS_DIRECTIVES = new Set(['s-maxage', 'max-age', 'no-cache']);

/** Whether a response states how long it is fresh (or that it never is without revalidation). */
function statesFreshness(headers: OutgoingHttpHeaders): boolean {
  if (headers.expires !== undefined) return true;
  if (headers['cache-control'] === undefined) return false;
  return tokens(header(headers, 'cache-control')).some((directive) => FRESHNESS_DIRECTIVES.has(directive));
}

/** The lower-case, string-valued headers `http-cache-semantics` reads. */
function policyHeaders(headers: OutgoingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.map(String) : String(value);
  }
  return out;
}

/** The freshness of `response`, produced `now`, as a shared cache computes it. */
export function freshnessOf(response: { status: number; headers: OutgoingHttpHeaders }, now: number = Date.now()): Freshness {
  const freshness: Freshness = { at: now };
  const headers = policyHeaders(response.headers);
  const states = statesFreshness(response.headers);
  if (headers.age === undefined && headers.date === undefined && !states) return freshness;
  // The request's own headers do not matter here: credentials are handled by the key's identity.
  const policy = new CachePolicy({ method: 'GET', url: '/', headers: {} }, { status: response.status, headers }, { shared: true });
  const age = Math.floor(policy.age());
  if (age > 0) freshness.age = age;
  if (!states) return freshness;
  // Not `timeToLive()`: it counts the stale windows in, and a response is fresh only for its max age.
  freshness.fresh = policy.storable() ? Math.max(0, Math.floor((policy.maxAge() - policy.age()) * 1000)) : 0;
  const cacheControl = header(response.headers, 'cache-control');
  if (freshness.fresh > 0 && !tokens(cacheControl).some((directive) => NO_STALE_DIRECTIVES.has(directive))) {
    const revalidate = directiveSeconds(cacheControl, 'stale-while-revalidate');
    const ifError = directiveSeconds(cacheControl, 'stale-if-error');
    if (revalidate) freshness.revalidate = revalidate;
    if (ifError) freshness.ifError = ifError;
  }
  return freshness;
}

/**
 * The stale windows of a shared response (core's `staleFor`): its `stale-while-revalidate` and
 * `stale-if-error`, counted from the end of its stored copy (`JOIN_GRACE_MS` after its freshness);
 * undefined (the stage's) for a response that states no freshness.
 */
export function staleWindowsOf(value: unknown): { whileRevalidateMs: number; ifErrorMs: number } | undefined {
  const { fresh, revalidate, ifError } = (value ?? {}) as Partial<Freshness>;
  if (typeof fresh !== 'number') return undefined;
  const past = (seconds: number | undefined) => Math.max(0, (seconds ?? 0) * 1000 - JOIN_GRACE_MS);
  return { whileRevalidateMs: past(revalidate), ifErrorMs: past(ifError) };
}

/**
 * Whether a stored response past its freshness may still be served stale now (its copy kept for the run's
 * callers, `staleFor` > 0): while its `stale-while-revalidate` lasts. Its refresh starts with the first
 * request after the copy is gone, within `JOIN_GRACE_MS`.
 */
export function servableStale(response: Partial<Freshness>, now: number = Date.now()): boolean {
  const { at, fresh, revalidate } = response;
  return at !== undefined && fresh !== undefined && revalidate !== undefined && now < at + fresh + revalidate * 1000;
}

/**
 * How long, from `now`, the stored copy of `value` may be kept (the flight's `resultTtlMs`): its freshness
 * left plus `JOIN_GRACE_MS`; undefined (the stage's) for anything that states none.
 */
export function keepFor(value: unknown, now: number = Date.now()): number | undefined {
  const { at, fresh } = (value ?? {}) as Partial<Freshness>;
  if (typeof fresh !== 'number' || typeof at !== 'number') return undefined;
  return at + fresh - now + JOIN_GRACE_MS;
}

/**
 * Whether a response read back after its run may no longer be replayed: how long until its stored copy
 * is gone (ms, at least 1), or 0 while it is fresh.
 */
export function staleFor(response: Partial<Freshness>, now: number = Date.now()): number {
  const { at, fresh } = response;
  if (fresh === undefined || at === undefined || now - at < fresh) return 0;
  return Math.max(1, Math.min(at + fresh + JOIN_GRACE_MS - now, JOIN_GRACE_MS));
}

/** The `Age` of a replayed response, in seconds; undefined for a response that carries no freshness. */
export function ageOf(response: Partial<Freshness>, now: number = Date.now()): number | undefined {
  if (response.at === undefined) return undefined;
  return Math.floor((response.age ?? 0) + Math.max(0, now - response.at) / 1000);
}
