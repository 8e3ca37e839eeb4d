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
import { constants, deflateRawSync } from 'node:zlib';
import { FlightCorruptResultError, FlightValidationError } from '../errors.js';
import type { EncodeOptions, ResultCodec, StoredResult } from '../ports/codec.js';
import { decodeBytes, decodeText } from './envelope-decode.js';
import { BYTES_PREFIX, sumOf, tooLarge, UNDEFINED_PAYLOAD, utf8Length } from './envelope-format.js';

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
      if (payload instanceof Uint8Array) return decodeBytes(payload, maxBytes, parse);
      if (typeof payload !== 'string') throw new FlightCorruptResultError('stored result is not text');
      return decodeText(payload, maxBytes, parse);
    },
  };
}
