import { hashPart } from '@flight/core';
import { flightId, type FlightRef } from '@flight/core/adapter';

/**
 * The Redis key of one flight: a single string holding its record and, once SUCCEEDED, its result (see
 * lua/includes/common.lua), named `<prefix>:<stage>:{<tag>}:<layout>` so that an operator finds a stage's
 * flights by pattern (`redis-cli --scan --pattern 'flight:report:*'`). Its hash tag is shared by the
 * flight's notice channel.
 */
export interface FlightKeys {
  /** The hash tag content: a digest of stage and key (user input never reaches the key layout). */
  tag: string;
  /** The flight's key (record + result). */
  meta: string;
  /** `[meta]`, the KEYS of every flight script (built once per flight). */
  list: readonly [string];
  /**
   * The flight's stale copy (core's `StaleCopy`; lua/includes/stale.lua): its last success kept past its
   * fresh time, in a key of its own under the same hash tag (`<meta>:stale`, which no stage pattern matches).
   */
  stale: string;
  /** `[meta, stale]`, the KEYS of the scripts that read or write the stale copy too. */
  withStale: readonly [string, string];
}

/** 22 base64url characters (132 bits) of SHA-256: safe in any key, never an empty `{}`. */
export function digest(text: string): string {
  // hashPart: SHA-256, base64url (its first 32 characters; 22 of them here).
  return hashPart(text).slice(0, 22);
}

/**
 * The layout of the stored record (see lua/includes/header.lua), part of every flight key: scripts of
 * another layout never read a record they would mis-parse. During a rolling upgrade the two versions
 * coordinate separately (each flight runs at most once per version) instead of corrupting each other.
 * Bump it with every change of the record layout.
 */
export const RECORD_LAYOUT = 'r4';

export function flightKeys(prefix: string, ref: FlightRef): FlightKeys {
  const tag = digest(flightId(ref));
  const meta = `${prefix}:${ref.stage}:{${tag}}:${RECORD_LAYOUT}`;
  const stale = `${meta}:stale`;
  return { tag, meta, list: [meta], stale, withStale: [meta, stale] };
}

/**
 * The `SCAN … MATCH` pattern of every flight key of `stage` (stage names hold no glob characters), or of
 * every stage's when `stage` is undefined.
 */
export function stageKeyPattern(prefix: string, stage: string | undefined): string {
  return `${escapeGlob(prefix)}:${stage ?? '*'}:{*}:${RECORD_LAYOUT}`;
}

/** The stage and hash tag of a flight key; undefined for any other key. */
export function parseFlightKey(prefix: string, key: string): { stage: string; tag: string } | undefined {
  if (!key.startsWith(`${prefix}:`) || !key.endsWith(`}:${RECORD_LAYOUT}`)) return undefined;
  const rest = key.slice(prefix.length + 1, -(RECORD_LAYOUT.length + 1));
  const open = rest.indexOf(':{');
  if (open <= 0 || !rest.endsWith('}')) return undefined;
  return { stage: rest.slice(0, open), tag: rest.slice(open + 2, -1) };
}

function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}

/**
 * The channel of one flight's terminal notices: the flight's hash tag (so on a cluster SPUBLISH keeps it
 * on the shard that owns the flight's slot) and the logical database (pub/sub ignores the DB: without it,
 * the same prefix on db 0 and db 1 would share notices).
 */
export function noticeChannel(prefix: string, tag: string, db: number): string {
  return `${prefix}:{${tag}}:db${db}:done`;
}

/** The stream of one run (epoch) of a streamed flight: the flight's hash tag, so its scripts stay on one slot. */
export function streamKey(prefix: string, tag: string, epoch: number): string {
  return `${prefix}:{${tag}}:${RECORD_LAYOUT}:stream:${epoch}`;
}

export function lockKey(prefix: string, sessionId: string): string {
  return `${prefix}:lock:{${digest(sessionId)}}`;
}
