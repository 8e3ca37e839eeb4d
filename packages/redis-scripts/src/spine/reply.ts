/**
 * Decodes the scripts' replies `{ code, record, result | false }` into core's types. The record is the
 * flight's record as stored (a fixed-width header, then length-prefixed text fields: see
 * `src/record-layout.ts`), one bulk string: far cheaper for Redis to send than 20 values.
 */
import { FlightCoordinationError } from '@flight/core';
import {
  type AcquireInput,
  type FlightMeta,
  type FlightRecord,
  type FlightRef,
  type FlightStatus,
  type StaleCopy,
  type StaleOffer,
  transitions,
  type WriteReply,
} from '@flight/core/adapter';
import { RECORD_HEADER, RECORD_HEADER_BYTES, RECORD_TEXT_FIELDS, recordMeta } from './record.generated';
import { wholeLeaseTerms } from './script-args';

export interface ScriptReply {
  code: string;
  meta: FlightMeta | null;
  result: string | undefined;
  /** The server's time, when the reply is a record the script just created (see `freshOwnerMeta`). */
  serverNow?: number | undefined;
  /** The stale copy an acquire offered (its 4th element; lua/includes/stale.lua `stale_offer`). */
  stale?: StaleOffer | undefined;
}

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

const STATUS_OF: Record<string, FlightStatus> = {
  P: 'PENDING',
  R: 'RUNNING',
  S: 'SUCCEEDED',
  F: 'FAILED',
  C: 'CANCELLED',
  E: 'EXPIRED',
};

/** A record as the client returned it (a string, or a Buffer of its UTF-8), as text; undefined for anything else. */
function recordText(value: unknown): string | undefined {
  return typeof value === 'string' ? value : Buffer.isBuffer(value) ? value.toString('utf8') : undefined;
}

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
  if (raw === null || raw === undefined || raw === false || raw === '') return null;
  const record = recordText(raw);
  if (record === undefined) throw new FlightCoordinationError(`unexpected script reply element ${typeof raw}`);
  if (record.length < RECORD_HEADER_BYTES) throw new FlightCoordinationError('malformed flight record');
  return metaOfRecord(record, ref, splitRecord(record).texts);
}

/**
 * The text fields of a stored record (RECORD_TEXT_FIELDS), each `<bytes>:<value>` after the header, and
 * what follows them (`rest`: the result of a SUCCEEDED flight, read whole with GET; '' in script replies).
 * Lengths count UTF-8 bytes: an ASCII record (the usual case) is cut as a string, any other as bytes.
 */
export function splitRecord(record: string): { texts: string[]; rest: string } {
  const count = RECORD_TEXT_FIELDS.length;
  const texts = new Array<string>(count);
  if (Buffer.byteLength(record, 'utf8') === record.length) {
    let i = RECORD_HEADER_BYTES;
    for (let f = 0; f < count; f++) {
      const colon = record.indexOf(':', i);
      const n = Number(record.slice(i, colon));
      if (colon < 0 || !Number.isSafeInteger(n)) throw new FlightCoordinationError('malformed flight record');
      texts[f] = record.slice(colon + 1, colon + 1 + n);
      i = colon + 1 + n;
    }
    return { texts, rest: record.slice(i) };
  }
  const bytes = Buffer.from(record, 'utf8');
  const end = textFieldsOf(bytes, texts);
  return { texts, rest: bytes.toString('utf8', end) };
}

/** Walks the text fields of a record held as bytes (into `texts` when given); returns where they end. */
export function textFieldsOf(bytes: Buffer, texts?: string[]): number {
  let i = RECORD_HEADER_BYTES;
  for (let f = 0; f < RECORD_TEXT_FIELDS.length; f++) {
    const colon = bytes.indexOf(0x3a, i);
    const n = Number(bytes.toString('latin1', i, colon));
    if (colon < 0 || !Number.isSafeInteger(n)) throw new FlightCoordinationError('malformed flight record');
    if (texts) texts[f] = bytes.toString('utf8', colon + 1, colon + 1 + n);
    i = colon + 1 + n;
  }
  return i;
}

/**
 * A result stored as bytes (the envelope codec's `f2.b.` form, `storesBytes`): the scripts reply as text,
 * which carries such a result damaged past its ASCII head, so it is read again with `RedisDriver.getBuffer`.
 */
export function isBytesResult(result: unknown): result is string {
  return typeof result === 'string' && result.startsWith('f2.b.');
}

/**
 * The result of `stored` (the flight's key read as bytes) when it is still the SUCCEEDED record of run
 * `epoch` with a result; undefined when the key holds anything else by now.
 */
export function resultBytesOf(stored: Buffer, epoch: number): Buffer | undefined {
  if (stored.length < RECORD_HEADER_BYTES || stored[0] !== 0x53 /* S */) return undefined;
  const [epochAt, epochWidth] = RECORD_HEADER.epoch;
  const [resultAt] = RECORD_HEADER.resultRef;
  if (Number(stored.toString('latin1', epochAt, epochAt + epochWidth)) !== epoch || stored[resultAt] !== 0x31 /* 1 */) return undefined;
  return stored.subarray(textFieldsOf(stored));
}

/** The meta of the record `record` as stored; throws FlightCoordinationError when it is none. */
function metaOfRecord(record: string, ref: FlightRef, texts: readonly string[]): FlightMeta {
  const status = STATUS_OF[record[0]!];
  if (status === undefined || record.length < RECORD_HEADER_BYTES) throw new FlightCoordinationError('malformed flight record');
  return recordMeta(record, status, texts, ref);
}

/**
 * A flight as GET reads it (the record, then its result once SUCCEEDED): what `transitions` calls a
 * stored record. Throws FlightCoordinationError when the string is no flight record.
 */
export function decodeStoredFlight(stored: string, ref: FlightRef): FlightRecord {
  if (stored.length < RECORD_HEADER_BYTES) throw new FlightCoordinationError('malformed flight record');
  const { texts, rest } = splitRecord(stored);
  const meta = metaOfRecord(stored, ref, texts);
  return meta.resultRef === '' ? { meta } : { meta, result: rest };
}

/**
 * The record `acquire` created for `input` when it found none, from the three values it replied
 * (epoch, server time, nonce): everything else is the caller's own input (transitions.ts `newOwnerMeta`).
 * The script stores whole milliseconds of the lease terms (the coordinator sends them truncated).
 */
export function freshOwnerMeta(values: unknown[], input: AcquireInput): FlightMeta {
  return transitions.newOwnerMeta(wholeLeaseTerms(input), null, num(values[1]), num(values[0]), text(values[2]));
}

/**
 * An owner write's reply (markRunning, heartbeat, complete, fail) as core's `WriteReply`. The record of an
 * accepted write is checked at once (a record's status letter and header) and decoded only when its `meta`
 * is first read: the owner path rarely reads it (the `completed` event's follower count), and decoding
 * every field was a few microseconds of every flight. `updatedAt` (the server clock's sample) is read
 * from the header without decoding the rest.
 */
export function decodeWriteReply(raw: unknown, ref: FlightRef): { reply: WriteReply; updatedAt: number | undefined } {
  if (Array.isArray(raw) && raw.length >= 2 && text(raw[0]) === 'OK') {
    const record = recordText(raw[1]);
    if (record !== undefined && record.length >= RECORD_HEADER_BYTES && STATUS_OF[record[0]!] !== undefined) {
      const [at, width] = RECORD_HEADER.updatedAt;
      const updatedAt = Number(record.slice(at, at + width));
      if (!Number.isSafeInteger(updatedAt)) throw new FlightCoordinationError('malformed flight record');
      return { reply: lazyAccepted(record, ref), updatedAt: unchanged(raw) ? undefined : updatedAt };
    }
  }
  const reply = decodeReply(raw, ref);
  if (reply.code === 'OK' && reply.meta)
    return { reply: { ok: true, meta: reply.meta }, updatedAt: unchanged(raw) ? undefined : reply.meta.updatedAt };
  const code = reply.code === 'FORGOTTEN' ? 'FORGOTTEN' : 'FENCED';
  return { reply: { ok: false, code, status: reply.meta?.status ?? null, epoch: reply.meta?.epoch ?? null }, updatedAt: undefined };
}

/**
 * True for the OK of a repeated write that found its outcome stored already (complete, fail): its record's
 * `updatedAt` is the first write's time, long past perhaps, so it is no sample of the server's clock.
 */
const unchanged = (raw: unknown): boolean => Array.isArray(raw) && text(raw[2]) === 'unchanged';

/** An accepted write whose `meta` is decoded from `record` on first read (then kept). */
function lazyAccepted(record: string, ref: FlightRef): WriteReply {
  let meta: FlightMeta | undefined;
  return {
    ok: true,
    get meta(): FlightMeta {
      return (meta ??= metaOfRecord(record, ref, splitRecord(record).texts));
    },
  };
}

export function decodeReply(raw: unknown, ref: FlightRef): ScriptReply {
  if (!Array.isArray(raw) || raw.length < 2) throw new FlightCoordinationError('unexpected script reply shape');
  const result = raw[2];
  const record: unknown = raw[1];
  const decoded: ScriptReply = {
    code: text(raw[0]),
    meta: decodeMeta(record, ref),
    result: result === null || result === undefined || result === false || result === 0 ? undefined : text(result),
    serverNow: Array.isArray(record) ? num(record[1]) : undefined,
  };
  if (raw.length > 3 && Array.isArray(raw[3])) decoded.stale = staleOffer(raw[3]);
  return decoded;
}

/** An acquire's stale offer `{ epoch, ageMs, revalidateForMs, errorForMs, result }` (its result as text). */
function staleOffer(values: unknown[]): StaleOffer {
  if (values.length !== 5) throw new FlightCoordinationError(`unexpected stale copy of ${values.length} values`);
  return {
    epoch: num(values[0]),
    ageMs: num(values[1]),
    revalidateForMs: num(values[2]),
    errorForMs: num(values[3]),
    result: text(values[4]),
  };
}

/**
 * A stale copy as stored (lua/includes/stale.lua), read as bytes: its result when it is still run `epoch`'s,
 * else undefined.
 */
export function staleBytesOf(stored: Buffer, epoch: number): Buffer | undefined {
  const nl = stored.indexOf(0x0a);
  if (nl < 0 || Number(stored.toString('latin1', 0, stored.indexOf(0x20))) !== epoch) return undefined;
  return stored.subarray(nl + 1);
}

/** A stale copy as stored, read as text (`readStale`); null when the string is none. */
export function decodeStaleCopy(stored: string): StaleCopy | null {
  const nl = stored.indexOf('\n');
  const head = nl < 0 ? [] : stored.slice(0, nl).split(' ').map(Number);
  if (head.length !== 5 || !head.every(Number.isSafeInteger)) return null;
  const [epoch, storedAt, freshUntil, revalidateUntil, errorUntil] = head as [number, number, number, number, number];
  return { result: stored.slice(nl + 1), epoch, storedAt, freshUntil, revalidateUntil, errorUntil };
}
