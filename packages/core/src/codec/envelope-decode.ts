/**
 * Reading a stored envelope back (see envelope-codec.ts for the forms): the header and checksum checked,
 * the size capped before and while inflating, version 1 payloads still read.
 */
import { createHash } from 'node:crypto';
import { inflateRawSync } from 'node:zlib';
import { FlightCorruptResultError, FlightResultTooLargeError } from '../errors.js';
import { BYTES_PREFIX, HEADER_LENGTH, sumOf, tooLarge, utf8Length } from './envelope-format.js';

/** The serializer's parse, throwing `FlightCorruptResultError` for text it cannot parse. */
export type Parse = (text: string) => unknown;

/** A `b` payload: `f2.b.<crc>.` then the deflated bytes. */
export function decodeBytes(payload: Uint8Array, maxBytes: number, parse: Parse): unknown {
  const bytes = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  if (bytes.length < HEADER_LENGTH || !bytes.subarray(0, 5).equals(BYTES_PREFIX) || bytes[13] !== 0x2e) {
    // Not a `b` payload: text a coordinator handed back as bytes.
    return decodeText(bytes.toString('utf8'), maxBytes, parse);
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

export function decodeText(payload: string, maxBytes: number, parse: Parse): unknown {
  if (payload.startsWith('f2.')) return decodeV2(payload, maxBytes, parse);
  if (payload.startsWith('f1.')) return decodeV1(payload, maxBytes, parse);
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

function decodeV2(payload: string, maxBytes: number, parse: Parse): unknown {
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
function decodeV1(payload: string, maxBytes: number, parse: Parse): unknown {
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
