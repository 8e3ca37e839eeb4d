import { createHash } from 'node:crypto';
import { flightId, type FlightRef } from '@flight/core';

/** The Redis keys of one flight. All three share one hash tag, so every script is valid on a cluster. */
export interface FlightKeys {
  /** The hash tag content: a digest of stage and key (user input never reaches the key layout). */
  tag: string;
  meta: string;
  result: string;
  events: string;
}

/** 22 base64url characters (132 bits) of SHA-256: safe in any key, never an empty `{}`. */
export function digest(text: string): string {
  return createHash('sha256').update(text).digest('base64url').slice(0, 22);
}

export function flightKeys(prefix: string, ref: FlightRef): FlightKeys {
  const tag = digest(flightId(ref));
  const base = `${prefix}:{${tag}}`;
  return { tag, meta: `${base}:meta`, result: `${base}:res`, events: `${base}:ev` };
}

/** The one channel per prefix on which terminal notices are published. */
export function eventChannel(prefix: string): string {
  return `${prefix}:events`;
}

export function lockKey(prefix: string, sessionId: string): string {
  return `${prefix}:lock:{${digest(sessionId)}}`;
}
