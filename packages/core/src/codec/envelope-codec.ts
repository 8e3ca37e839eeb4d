/**
 * The default result codec (the seed's `FlightResultSerializer`): serialize (JSON by default),
 * compress above a threshold, base64, and a SHA-256 checksum verified on every read.
 *
 * Stored form: `f1.<flags>.<checksum>.<base64 body>` where flags is `j` (plain) or `z` (deflated)
 * or `u` (undefined), and the checksum covers the flags and the body bytes.
 */
import { createHash } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { FlightCorruptResultError, FlightResultTooLargeError, FlightValidationError } from '../errors.js';
import type { ResultCodec } from '../ports/codec.js';

export interface Serializer {
  stringify(value: unknown): string;
  parse(text: string): unknown;
}

export interface EnvelopeCodecOptions {
  /** Payloads larger than this are deflated. @default 1024 */
  compressAboveBytes?: number;
  /** Turns values into text and back. @default JSON */
  serializer?: Serializer;
}

const PREFIX = 'f1';

function checksum(flags: string, body: Buffer): string {
  return createHash('sha256').update(flags).update(body).digest('base64url').slice(0, 22);
}

const UNDEFINED_PAYLOAD = `${PREFIX}.u.${checksum('u', Buffer.alloc(0))}.`;

export function createEnvelopeCodec(options: EnvelopeCodecOptions = {}): ResultCodec {
  const compressAbove = options.compressAboveBytes ?? 1024;
  const serializer = options.serializer ?? { stringify: JSON.stringify, parse: JSON.parse };

  /** The payload, and the UTF-8 bytes that were serialized (`undefined` for an undefined value). */
  function encodeRaw(value: unknown, maxBytes: number): { payload: string; raw: Buffer | undefined } {
    if (value === undefined) return { payload: UNDEFINED_PAYLOAD, raw: undefined };
    let text: string | undefined;
    try {
      text = serializer.stringify(value);
    } catch (error) {
      throw new FlightValidationError(`result cannot be serialized: ${(error as Error).message}`, { cause: error });
    }
    if (typeof text !== 'string') throw new FlightValidationError('result cannot be serialized (serializer returned no text)');
    const raw = Buffer.from(text, 'utf8');
    if (raw.length > maxBytes) {
      throw new FlightResultTooLargeError(`result is ${raw.length} bytes, above the cap of ${maxBytes}`, {
        context: { bytes: raw.length, maxBytes },
      });
    }
    const flags = raw.length > compressAbove ? 'z' : 'j';
    const body = flags === 'z' ? deflateRawSync(raw) : raw;
    return { payload: `${PREFIX}.${flags}.${checksum(flags, body)}.${body.toString('base64')}`, raw };
  }

  return {
    encode(value, { maxBytes }) {
      return encodeRaw(value, maxBytes).payload;
    },

    // What `decode(encode(value))` returns, without the base64, inflate and checksum work: the payload
    // holds exactly `raw` (deflate and base64 are lossless), so parsing `raw` gives the same value.
    encodeWithCopy(value, { maxBytes }) {
      const { payload, raw } = encodeRaw(value, maxBytes);
      if (raw === undefined) return { payload, value: undefined };
      try {
        return { payload, value: serializer.parse(raw.toString('utf8')) };
      } catch (error) {
        throw new FlightCorruptResultError('stored result could not be parsed', { cause: error });
      }
    },

    decode(payload, { maxBytes }) {
      if (typeof payload !== 'string') throw new FlightCorruptResultError('stored result is not text');
      const parts = payload.split('.');
      if (parts.length !== 4 || parts[0] !== PREFIX) throw new FlightCorruptResultError('stored result has no valid envelope');
      const [, flags = '', sum, encoded = ''] = parts;
      if (flags !== 'j' && flags !== 'z' && flags !== 'u') throw new FlightCorruptResultError(`unknown result flags ${flags}`);
      // Base64 of maxBytes is at most 4/3 larger; anything longer cannot be a valid payload.
      if (encoded.length > Math.ceil((maxBytes * 4) / 3) + 4) {
        throw new FlightResultTooLargeError(`stored result is above the cap of ${maxBytes} bytes`, { context: { maxBytes } });
      }
      const body = Buffer.from(encoded, 'base64');
      if (body.toString('base64') !== encoded || checksum(flags, body) !== sum) {
        throw new FlightCorruptResultError('stored result failed its checksum (corrupt or truncated)');
      }
      if (flags === 'u') return undefined;
      let raw: Buffer;
      if (flags === 'z') {
        try {
          raw = inflateRawSync(body, { maxOutputLength: maxBytes });
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || error instanceof RangeError) {
            throw new FlightResultTooLargeError(`stored result inflates past the cap of ${maxBytes} bytes`, {
              cause: error,
              context: { maxBytes },
            });
          }
          throw new FlightCorruptResultError('stored result could not be decompressed', { cause: error });
        }
      } else {
        raw = body;
      }
      try {
        return serializer.parse(raw.toString('utf8'));
      } catch (error) {
        throw new FlightCorruptResultError('stored result could not be parsed', { cause: error });
      }
    },
  };
}
