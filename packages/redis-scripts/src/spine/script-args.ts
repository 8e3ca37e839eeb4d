/** The checked arguments of the flight scripts (see each script's ARGV header in lua/). */
import { FlightResultTooLargeError, FlightValidationError } from '@flight/core';
import { type AcquireInput, type Fence } from '@flight/core/adapter';

/** Longest failure message stored with a FAILED flight; longer ones are cut. */
export const MAX_ERROR_MESSAGE_LENGTH = 4096;

/** A duration in whole milliseconds; throws `FlightValidationError` unless it is a non-negative number. */
export function ms(name: string, value: number): string {
  if (!Number.isFinite(value) || value < 0) throw new FlightValidationError(`${name} must be a non-negative number, got ${value}`);
  return String(Math.trunc(value));
}

/**
 * `input` with the lease terms the acquire script stores: whole milliseconds (`acquireArgs` sends them
 * truncated), so a record built on this side is the script's.
 */
export function wholeLeaseTerms(input: AcquireInput): AcquireInput {
  return Number.isInteger(input.leaseTtlMs) && Number.isInteger(input.maxRunMs)
    ? input
    : { ...input, leaseTtlMs: Math.trunc(input.leaseTtlMs), maxRunMs: Math.trunc(input.maxRunMs) };
}

/** ARGV of lua/acquire.lua. */
export function acquireArgs(now: string, input: AcquireInput): string[] {
  const args = [
    now,
    input.sessionId === undefined ? '0' : '1',
    input.sessionId ?? '',
    input.ownerId,
    input.ownerToken,
    input.joinEpoch === undefined ? '' : String(input.joinEpoch),
    ms('takeoverAfterMs', input.takeoverAfterMs),
    ms('leaseTtlMs', input.leaseTtlMs),
    ms('maxRunMs', input.maxRunMs),
    input.startRunning ? '1' : '0',
  ];
  // Stored only by a record this call creates; not sent at all without one (unless an argument follows).
  const joinFailures = input.joinFailures === true && input.joinEpoch !== undefined;
  if (input.traceparent || input.acceptStale || joinFailures) args.push(input.traceparent ?? '');
  // The stale copy offered too (lua/includes/stale.lua): the script then reads KEYS[2] (scripts.ts `scriptKeys`).
  if (input.acceptStale || joinFailures) args.push(input.acceptStale ? '1' : '0');
  if (joinFailures) args.push('1');
  return args;
}

/** Throws unless `result` is a string of at most `maxPayloadBytes` bytes (UTF-8). */
export function checkResultSize(result: unknown, maxPayloadBytes: number, fence: Fence): asserts result is string | Uint8Array {
  if (typeof result !== 'string' && !(result instanceof Uint8Array)) throw new FlightValidationError('result must be a string or bytes');
  // UTF-8 takes at most 3 bytes per UTF-16 unit: count the bytes only when the length cannot decide.
  if (typeof result !== 'string' || result.length * 3 > maxPayloadBytes) {
    const bytes = typeof result === 'string' ? Buffer.byteLength(result, 'utf8') : result.byteLength;
    if (bytes > maxPayloadBytes) {
      throw new FlightResultTooLargeError(`result of ${bytes} bytes exceeds maxPayloadBytes (${maxPayloadBytes})`, {
        context: { stage: fence.stage, key: fence.key, bytes },
      });
    }
  }
}

/** Throws unless `epoch` is absent or an integer. */
export function checkEpoch(epoch: number | undefined): void {
  if (epoch !== undefined && !Number.isSafeInteger(epoch)) {
    throw new FlightValidationError(`epoch must be an integer, got ${String(epoch)}`);
  }
}
