/**
 * CRC-32 (IEEE, the zlib polynomial) of UTF-8 text or of bytes: `zlib.crc32` where Node has it (≥ 20.15, ≥ 22.2),
 * otherwise a table-driven fallback that gives the same number, so nodes on different Node versions of
 * one cluster verify each other's payloads.
 */
import * as zlib from 'node:zlib';

type Crc32 = (data: string | Uint8Array, value?: number) => number;

let table: Int32Array | undefined;

function crcTable(): Int32Array {
  if (table) return table;
  table = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c;
  }
  return table;
}

/** The portable implementation (exported for tests: it must agree with `zlib.crc32`). */
export function crc32Fallback(data: string | Uint8Array, value = 0): number {
  const t = crcTable();
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  let crc = ~value;
  for (let i = 0; i < bytes.length; i++) crc = t[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8);
  return ~crc >>> 0;
}

const native = (zlib as unknown as { crc32?: Crc32 }).crc32;

/** CRC-32 of `data` (a string's UTF-8 bytes), continuing from `value`. */
export const crc32: Crc32 = typeof native === 'function' ? native : crc32Fallback;
