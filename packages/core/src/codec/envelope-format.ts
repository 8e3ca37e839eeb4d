/** The envelope's stored form (see envelope-codec.ts): flags, checksum, header, size checks. */
import { FlightResultTooLargeError } from '../errors.js';
import { crc32 } from './checksum.js';

const HEX = '00000000';
const hex8 = (n: number) => {
  const s = n.toString(16);
  return s.length === 8 ? s : HEX.slice(s.length) + s;
};
/** CRC of `<flags>.<body>` without building that string. */
export const sumOf = (flags: 'j' | 'z' | 'u' | 'b', body: string | Uint8Array) => hex8(crc32(body, FLAG_CRC[flags]));
const FLAG_CRC = { j: crc32('j.'), z: crc32('z.'), u: crc32('u.'), b: crc32('b.') } as const;
/** The first bytes of a `b` payload: `f2.b.` */
export const BYTES_PREFIX = Buffer.from('f2.b.', 'latin1');
export const UNDEFINED_PAYLOAD = `f2.u.${sumOf('u', '')}.`;
/** `f2.x.` + 8 hex digits + `.` */
export const HEADER_LENGTH = 14;

export function tooLarge(bytes: number, maxBytes: number): FlightResultTooLargeError {
  return new FlightResultTooLargeError(`result is ${bytes} bytes, above the cap of ${maxBytes}`, { context: { bytes, maxBytes } });
}

/** UTF-8 length of `text` when it may exceed `maxBytes` (at most 3 bytes per UTF-16 unit), else its lower bound. */
export function utf8Length(text: string, maxBytes: number): number {
  return text.length * 3 <= maxBytes ? text.length : Buffer.byteLength(text, 'utf8');
}
