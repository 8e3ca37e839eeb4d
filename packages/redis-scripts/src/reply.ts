/**
 * Decodes the scripts' replies `{ code, meta values, result | false }` into core's types. The meta is
 * the record's values in the fixed field order of `lua/includes/common.lua` (FIELDS): no field names on
 * the wire, and an absent (nil) value is the field's default ('' / 0 / false).
 */
import {
  FLIGHT_STATUSES,
  FlightCoordinationError,
  type AcquireInput,
  type FailureType,
  type FlightMeta,
  type FlightRef,
  type FlightStatus,
} from '@flight/core';

export interface ScriptReply {
  code: string;
  meta: FlightMeta | null;
  result: string | undefined;
}

/** The number of values in a meta reply (FIELDS in common.lua). */
export const META_FIELD_COUNT = 20;

function text(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined || value === false) return '';
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  if (typeof value === 'number') return String(value);
  throw new FlightCoordinationError(`unexpected script reply element ${typeof value}`);
}

function num(value: unknown): number {
  if (value === null || value === undefined || value === false) return 0;
  return Number(text(value));
}

const STATUSES = new Set<string>(FLIGHT_STATUSES);

/**
 * `ref` gives stage and requestKey, which the record does not store (they are the flight's identity); for
 * `acquire`, `ref` is its input, from which a freshly created record is rebuilt (see `freshOwnerMeta`).
 */
export function decodeMeta(values: unknown, ref: FlightRef): FlightMeta | null {
  if (!Array.isArray(values) || values.length === 0) return null;
  if (values.length === 3 && 'ownerToken' in ref) return freshOwnerMeta(values, ref as AcquireInput);
  if (values.length !== META_FIELD_COUNT) throw new FlightCoordinationError(`unexpected meta of ${values.length} values`);
  const status = text(values[0]);
  if (!STATUSES.has(status)) throw new FlightCoordinationError(`unexpected flight status ${status}`);
  // One object literal in FlightMeta's field order: one hidden class for every decoded record.
  return {
    status: status as FlightStatus,
    stage: ref.stage,
    requestKey: ref.key,
    sessionId: text(values[3]),
    ownerId: text(values[4]),
    ownerToken: text(values[5]),
    epoch: num(values[6]),
    takeovers: num(values[7]),
    followers: num(values[8]),
    createdAt: num(values[9]),
    updatedAt: num(values[10]),
    heartbeatAt: num(values[11]),
    expireAt: num(values[12]),
    deadlineAt: num(values[13]),
    retryable: text(values[14]) === '1',
    errorType: text(values[15]) as FailureType | '',
    errorCode: text(values[16]),
    errorMessage: text(values[17]),
    resultRef: text(values[18]),
    nonce: text(values[19]),
  };
}

/**
 * The record `acquire` created for `input` when it found none, from the three values it replied
 * (epoch, server time, nonce): everything else is the caller's own input (transitions.ts `newOwnerMeta`).
 */
export function freshOwnerMeta(values: unknown[], input: AcquireInput): FlightMeta {
  const now = num(values[1]);
  return {
    status: input.startRunning ? 'RUNNING' : 'PENDING',
    stage: input.stage,
    requestKey: input.key,
    sessionId: input.sessionId ?? '',
    ownerId: input.ownerId,
    ownerToken: input.ownerToken,
    epoch: num(values[0]),
    takeovers: 0,
    followers: 0,
    createdAt: now,
    updatedAt: now,
    heartbeatAt: now,
    expireAt: now + Math.trunc(input.leaseTtlMs),
    deadlineAt: now + Math.trunc(input.maxRunMs),
    retryable: false,
    errorType: '',
    errorCode: '',
    errorMessage: '',
    resultRef: '',
    nonce: text(values[2]),
  };
}

export function decodeReply(raw: unknown, ref: FlightRef): ScriptReply {
  if (!Array.isArray(raw) || raw.length < 2) throw new FlightCoordinationError('unexpected script reply shape');
  const result = raw[2];
  return {
    code: text(raw[0]),
    meta: decodeMeta(raw[1], ref),
    result: result === null || result === undefined || result === false || result === 0 ? undefined : text(result),
  };
}
