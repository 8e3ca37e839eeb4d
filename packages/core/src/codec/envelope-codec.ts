/**
 * The default result codec: serialize (JSON by default), deflate
 * only where it pays, and a checksum verified on every read.
 *
 * Stored form (version 2): `f2.<flags>.<crc>.<body>`
 * - `j`: body is the serialized text as is (no base64: JSON text is already a valid payload string);
 * - `z`: body is the base64 of the raw-deflated UTF-8 text (results above `compressAboveBytes`);
 * - `b`: the same deflated bytes without base64, the whole payload bytes (a `Uint8Array`), when the
 *   coordinator stores bytes (`EncodeOptions.bytes`);
 * - `u`: `undefined`, empty body.
 * `crc` is the CRC-32 of `<flags>.<body>` as 8 hex digits: it catches damage and truncation in storage or
 * transport (not tampering: whoever can write the key can write a matching digest of any kind).
 *
 * Version 1 payloads (`f1.<flags>.<sha-256, 22 chars>.<base64 body>`) still decode, so results stored
 * before an upgrade keep replaying.
 */
import { createHash } from 'node:crypto';
import { constants, deflateRawSync, inflateRawSync } from 'node:zlib';
import { FlightCorruptResultError, FlightResultTooLargeError, FlightValidationError } from '../errors.js';
import type { EncodeOptions, ResultCodec, StoredResult } from '../ports/codec.js';
import { crc32 } from './checksum.js';

export interface Serializer {
  stringify(value: unknown): string;
  parse(text: string): unknown;
}

export interface EnvelopeCodecOptions {
  /**
   * Results whose serialized text is larger than this many UTF-8 bytes are deflated (level 1). Measured on
   * text results (bench/profiles/core.md): below 8 KiB deflate + base64 costs 20–30 µs to save under
   * 3 KB; from 8 KiB up it keeps 40–50 % of the bytes at ≈ 4–7 µs per KiB. @default 8192
   */
  compressAboveBytes?: number;
  /** Turns values into text and back. @default JSON */
  serializer?: Serializer;
}

/** Default of `compressAboveBytes`. */
export const DEFAULT_COMPRESS_ABOVE_BYTES = 8192;

const HEX = '00000000';
const hex8 = (n: number) => {
  const s = n.toString(16);
  return s.length === 8 ? s : HEX.slice(s.length) + s;
};
/** CRC of `<flags>.<body>` without building that string. */
const sumOf = (flags: 'j' | 'z' | 'u' | 'b', body: string | Uint8Array) => hex8(crc32(body, FLAG_CRC[flags]));
const FLAG_CRC = { j: crc32('j.'), z: crc32('z.'), u: crc32('u.'), b: crc32('b.') } as const;
/** The first bytes of a `b` payload: `f2.b.` */
const BYTES_PREFIX = Buffer.from('f2.b.', 'latin1');
const UNDEFINED_PAYLOAD = `f2.u.${sumOf('u', '')}.`;
/** `f2.x.` + 8 hex digits + `.` */
const HEADER_LENGTH = 14;

function tooLarge(bytes: number, maxBytes: number): FlightResultTooLargeError {
  return new FlightResultTooLargeError(`result is ${bytes} bytes, above the cap of ${maxBytes}`, { context: { bytes, maxBytes } });
}

/** UTF-8 length of `text` when it may exceed `maxBytes` (at most 3 bytes per UTF-16 unit), else its lower bound. */
function utf8Length(text: string, maxBytes: number): number {
  return text.length * 3 <= maxBytes ? text.length : Buffer.byteLength(text, 'utf8');
}

/** The envelope codec: text unless the caller allows bytes (`EncodeOptions.bytes`). */
export interface EnvelopeCodec extends ResultCodec {
  encode(value: unknown, options: { maxBytes: number; bytes?: false }): string;
  encode(value: unknown, options: EncodeOptions): StoredResult;
  encodeWithCopy(value: unknown, options: { maxBytes: number; bytes?: false }): { payload: string; value: unknown };
  encodeWithCopy(value: unknown, options: EncodeOptions): { payload: StoredResult; value: unknown };
}

export function createEnvelopeCodec(options: EnvelopeCodecOptions = {}): EnvelopeCodec {
  const compressAbove = options.compressAboveBytes ?? DEFAULT_COMPRESS_ABOVE_BYTES;
  const serializer = options.serializer ?? { stringify: JSON.stringify, parse: JSON.parse };
  /** JSON gives back strings, booleans, null and finite numbers (but -0) as they were: no parse needed. */
  const unchangedByJson = (value: unknown): boolean =>
    options.serializer === undefined &&
    (typeof value === 'string' ||
      typeof value === 'boolean' ||
      value === null ||
      (typeof value === 'number' && Number.isFinite(value) && !Object.is(value, -0)));

  const parse = (text: string) => {
    try {
      return serializer.parse(text);
    } catch (error) {
      throw new FlightCorruptResultError('stored result could not be parsed', { cause: error });
    }
  };

  /** The payload, and the serialized text (`undefined` for an undefined value). */
  function encodeText(value: unknown, maxBytes: number, asBytes: boolean): { payload: StoredResult; text: string | undefined } {
    if (value === undefined) return { payload: UNDEFINED_PAYLOAD, text: undefined };
    let text: string | undefined;
    try {
      text = serializer.stringify(value);
    } catch (error) {
      throw new FlightValidationError(`result cannot be serialized: ${(error as Error).message}`, { cause: error });
    }
    if (typeof text !== 'string') throw new FlightValidationError('result cannot be serialized (serializer returned no text)');
    const bytes = utf8Length(text, Math.max(maxBytes, compressAbove));
    if (bytes > maxBytes) throw tooLarge(bytes, maxBytes);
    if (bytes <= compressAbove) return { payload: `f2.j.${sumOf('j', text)}.${text}`, text };
    const deflated = deflateRawSync(Buffer.from(text, 'utf8'), { level: constants.Z_BEST_SPEED });
    if (asBytes) return { payload: Buffer.concat([BYTES_PREFIX, Buffer.from(`${sumOf('b', deflated)}.`, 'latin1'), deflated]), text };
    const body = deflated.toString('base64');
    return { payload: `f2.z.${sumOf('z', body)}.${body}`, text };
  }

  /** A `b` payload: `f2.b.<crc>.` then the deflated bytes. */
  function decodeBytes(payload: Uint8Array, maxBytes: number): unknown {
    const bytes = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
    if (bytes.length < HEADER_LENGTH || !bytes.subarray(0, 5).equals(BYTES_PREFIX) || bytes[13] !== 0x2e) {
      // Not a `b` payload: text a coordinator handed back as bytes.
      return decodeText(bytes.toString('utf8'), maxBytes);
    }
    const body = bytes.subarray(HEADER_LENGTH);
    // Deflating at most maxBytes gives at most maxBytes plus a few bytes per 16 KiB block; inflating is capped too.
    if (body.length > Math.ceil(maxBytes * 1.01) + 64)
      throw new FlightResultTooLargeError(`stored result is above the cap of ${maxBytes} bytes`, { context: { maxBytes } });
    if (sumOf('b', body) !== bytes.toString('latin1', 5, 13)) {
      throw new FlightCorruptResultError('stored result failed its checksum (corrupt or truncated)');
    }
    return parse(inflate(body, maxBytes));
  }

  function decodeText(payload: string, maxBytes: number): unknown {
    if (payload.startsWith('f2.')) return decodeV2(payload, maxBytes);
    if (payload.startsWith('f1.')) return decodeV1(payload, maxBytes);
    throw new FlightCorruptResultError('stored result has no valid envelope');
  }

  function inflate(body: Buffer, maxBytes: number): string {
    try {
      return inflateRawSync(body, { maxOutputLength: maxBytes }).toString('utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || error instanceof RangeError) {
        throw new FlightResultTooLargeError(`stored result inflates past the cap of ${maxBytes} bytes`, {
          cause: error,
          context: { maxBytes },
        });
      }
      throw new FlightCorruptResultError('stored result could not be decompressed', { cause: error });
    }
  }

  function decodeV2(payload: string, maxBytes: number): unknown {
    const flags = payload[3];
    if (payload[2] !== '.' || payload[4] !== '.' || payload[13] !== '.' || (flags !== 'j' && flags !== 'z' && flags !== 'u')) {
      throw new FlightCorruptResultError('stored result has no valid envelope');
    }
    const body = payload.slice(HEADER_LENGTH);
    // Base64 of maxBytes is at most 4/3 larger; text is at least one UTF-16 unit per byte.
    if (body.length > (flags === 'z' ? Math.ceil((maxBytes * 4) / 3) + 4 : maxBytes)) {
      throw new FlightResultTooLargeError(`stored result is above the cap of ${maxBytes} bytes`, { context: { maxBytes } });
    }
    if (sumOf(flags, body) !== payload.slice(5, 13)) {
      throw new FlightCorruptResultError('stored result failed its checksum (corrupt or truncated)');
    }
    if (flags === 'u') return undefined;
    if (flags === 'j') {
      const bytes = utf8Length(body, maxBytes);
      if (bytes > maxBytes) throw tooLarge(bytes, maxBytes);
      return parse(body);
    }
    const raw = Buffer.from(body, 'base64');
    if (raw.toString('base64') !== body) throw new FlightCorruptResultError('stored result is not valid base64');
    return parse(inflate(raw, maxBytes));
  }

  /** Version 1: `f1.<flags>.<sha-256>.<base64>`. */
  function decodeV1(payload: string, maxBytes: number): unknown {
    const parts = payload.split('.');
    if (parts.length !== 4) throw new FlightCorruptResultError('stored result has no valid envelope');
    const [, flags = '', sum, encoded = ''] = parts;
    if (flags !== 'j' && flags !== 'z' && flags !== 'u') throw new FlightCorruptResultError(`unknown result flags ${flags}`);
    if (encoded.length > Math.ceil((maxBytes * 4) / 3) + 4) {
      throw new FlightResultTooLargeError(`stored result is above the cap of ${maxBytes} bytes`, { context: { maxBytes } });
    }
    const body = Buffer.from(encoded, 'base64');
    const digest = createHash('sha256').update(flags).update(body).digest('base64url').slice(0, 22);
    if (body.toString('base64') !== encoded || digest !== sum) {
      throw new FlightCorruptResultError('stored result failed its checksum (corrupt or truncated)');
    }
    if (flags === 'u') return undefined;
    return parse(flags === 'z' ? inflate(body, maxBytes) : body.toString('utf8'));
  }

  return {
    encode(value: unknown, { maxBytes, bytes }: EncodeOptions): any {
      return encodeText(value, maxBytes, bytes === true).payload;
    },

    // What `decode(encode(value))` returns, without the base64, inflate and checksum work: the payload
    // holds exactly `text` (deflate and base64 are lossless), so parsing `text` gives the same value.
    encodeWithCopy(value: unknown, { maxBytes, bytes }: EncodeOptions): any {
      const { payload, text } = encodeText(value, maxBytes, bytes === true);
      return { payload, value: text === undefined ? undefined : unchangedByJson(value) ? value : parse(text) };
    },

    decode(payload: StoredResult, { maxBytes }: { maxBytes: number }): unknown {
      if (payload instanceof Uint8Array) return decodeBytes(payload, maxBytes);
      if (typeof payload !== 'string') throw new FlightCorruptResultError('stored result is not text');
      return decodeText(payload, maxBytes);
    },
  };
}
