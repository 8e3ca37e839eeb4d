/**
 * Stable (normalised) flight keys: every node computes the same key for the
 * same logical request. `stage:part:part…` where each part is kept when it is short and made of
 * safe characters, and replaced by `~` + a SHA-256 digest otherwise. `~` and `:` never appear in a
 * kept part, so `('a:b','c')` and `('a','b:c')` can never give the same key.
 */
import { FlightValidationError } from '../errors.js';
import { assertStageName } from '../policy/stage-policy.js';
import type { FlightRef } from '../state/types.js';
import { digestOf } from './digest.js';

export type KeyPart = string | number | boolean;

const SAFE_PART = /^[A-Za-z0-9._-]{1,64}$/;
/** Longest request key accepted anywhere (user keys included). */
export const MAX_KEY_LENGTH = 1024;

/** A short, stable digest of any text (for free-text parts such as answers or prompts). */
export function hashPart(value: string | Uint8Array): string {
  return digestOf('sha256', value, 'base64url').slice(0, 32);
}

function encodePart(part: KeyPart, index: number): string {
  if (typeof part === 'number') {
    if (!Number.isFinite(part)) throw new FlightValidationError(`key part ${index} is not a finite number`);
    return String(part);
  }
  if (typeof part === 'boolean') return String(part);
  if (typeof part !== 'string') {
    throw new FlightValidationError(`key part ${index} must be a string, number or boolean, got ${typeof part}`);
  }
  return SAFE_PART.test(part) ? part : `~${hashPart(part)}`;
}

/** Builds the key of `stage` from its parts. Throws `FlightValidationError` for a bad stage or no parts. */
export function buildFlightKey(stage: string, parts: readonly KeyPart[]): string {
  assertStageName(stage);
  if (!Array.isArray(parts) || parts.length === 0) {
    throw new FlightValidationError(`a key of stage ${stage} needs at least one part`, { context: { stage } });
  }
  return [stage, ...parts.map(encodePart)].join(':');
}

/** Validates a request key given directly to `execute`: non-empty text of at most 1024 UTF-16 units, no NUL. */
export function assertRequestKey(key: unknown, stage: string): asserts key is string {
  if (typeof key !== 'string' || key.length === 0) {
    throw new FlightValidationError('request key must be a non-empty string', { context: { stage } });
  }
  if (key.length > MAX_KEY_LENGTH) {
    throw new FlightValidationError(
      `request key is ${key.length} characters, above ${MAX_KEY_LENGTH}; hash long parts with buildFlightKey`,
      {
        context: { stage, keyLength: key.length },
      },
    );
  }
  if (key.includes('\0')) throw new FlightValidationError('request key must not contain NUL', { context: { stage } });
}

/**
 * The identity of a flight as one string: stage and key joined by NUL, which neither may contain
 * (stage names are `A-Z a-z 0-9 . _ -`, request keys are checked by `assertRequestKey`).
 */
export function flightId(ref: FlightRef): string {
  return `${ref.stage}\u0000${ref.key}`;
}
