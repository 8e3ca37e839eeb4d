/**
 * Decodes the scripts' replies `{ code, record, result | false }` into core's types. The record is the
 * flight's record as stored (its fields length-prefixed in the order of FIELDS in
 * `lua/includes/common.lua`), one bulk string: far cheaper for Redis to send than 20 values.
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

/** The number of fields of a record (FIELDS in common.lua). */
export const META_FIELD_COUNT = 21;

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
export function decodeMeta(raw: unknown, ref: FlightRef): FlightMeta | null {
  if (Array.isArray(raw)) {
    // A freshly created record: epoch, server time, nonce (acquire only).
    if (raw.length === 3 && 'ownerToken' in ref) return freshOwnerMeta(raw, ref as AcquireInput);
    throw new FlightCoordinationError(`unexpected meta of ${raw.length} values`);
  }
  const values = splitRecord(raw);
  if (!values) return null;
  const status = values[0]!;
  if (!STATUSES.has(status)) throw new FlightCoordinationError(`unexpected flight status ${status}`);
  // One object literal in FlightMeta's field order: one hidden class for every decoded record.
  return {
    status: status as FlightStatus,
    stage: ref.stage,
    requestKey: ref.key,
    sessionId: values[3]!,
    ownerId: values[4]!,
    ownerToken: values[5]!,
    epoch: num(values[6]),
    takeovers: num(values[7]),
    followers: num(values[8]),
    createdAt: num(values[9]),
    updatedAt: num(values[10]),
    heartbeatAt: num(values[11]),
    expireAt: num(values[12]),
    deadlineAt: num(values[13]),
    retryable: values[14] === '1',
    errorType: values[15] as FailureType | '',
    errorCode: values[16]!,
    errorMessage: values[17]!,
    resultRef: values[18]!,
    nonce: values[19]!,
    forgottenEpoch: num(values[20]),
  };
}

/**
 * The values of a stored record (lua/includes/common.lua): META_FIELD_COUNT fields as `<bytes>:<value>`.
 * Lengths count UTF-8 bytes: an ASCII record (the usual case) is cut as a string, any other as bytes.
 * Returns null for '' (no live record).
 */
export function splitRecord(raw: unknown): string[] | null {
  if (raw === null || raw === undefined || raw === false || raw === '') return null;
  const text = typeof raw === 'string' ? raw : Buffer.isBuffer(raw) ? raw.toString('utf8') : undefined;
  if (text === undefined) throw new FlightCoordinationError(`unexpected script reply element ${typeof raw}`);
  const values: string[] = new Array<string>(META_FIELD_COUNT);
  if (Buffer.byteLength(text, 'utf8') === text.length) {
    let i = 0;
    for (let f = 0; f < META_FIELD_COUNT; f++) {
      const colon = text.indexOf(':', i);
      const n = Number(text.slice(i, colon));
      if (colon < 0 || !Number.isSafeInteger(n)) throw new FlightCoordinationError('malformed flight record');
      values[f] = text.slice(colon + 1, colon + 1 + n);
      i = colon + 1 + n;
    }
    return values;
  }
  const bytes = Buffer.from(text, 'utf8');
  let i = 0;
  for (let f = 0; f < META_FIELD_COUNT; f++) {
    const colon = bytes.indexOf(0x3a, i);
    const n = Number(bytes.toString('latin1', i, colon));
    if (colon < 0 || !Number.isSafeInteger(n)) throw new FlightCoordinationError('malformed flight record');
    values[f] = bytes.toString('utf8', colon + 1, colon + 1 + n);
    i = colon + 1 + n;
  }
  return values;
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
    forgottenEpoch: 0,
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
