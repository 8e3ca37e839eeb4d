/**
 * Codec cost figures: checksum candidates and the deflate break-even, on the bench's payloads.
 * `node --import ./bench/node_modules/tsx/dist/esm/index.mjs bench/profiles/codec-costs.ts`
 */
import { createHash } from 'node:crypto';
import * as zlib from 'node:zlib';
import { makePayload } from '../src/payload.ts';

const time = (n: number, fn: () => unknown) => {
  for (let i = 0; i < Math.min(n, 2000); i++) fn();
  const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) fn();
  return Number(process.hrtime.bigint() - t) / n / 1000;
};
const fnv1a = (text: string) => {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
};
const crc32 = (zlib as unknown as { crc32?: (d: string | Buffer) => number }).crc32;
console.log('bytes | sha256 µs | sha1 µs | md5 µs | fnv1a(js) µs | zlib.crc32 µs | stringify µs | deflate µs | inflate µs | deflated/raw | base64 µs');
for (const bytes of [64, 256, 512, 1024, 2048, 4096, 16384, 102400]) {
  const value = makePayload(bytes);
  const text = JSON.stringify(value);
  const buf = Buffer.from(text);
  const n = bytes > 10000 ? 500 : 20000;
  const z = zlib.deflateRawSync(buf);
  const row = [
    buf.length,
    time(n, () => createHash('sha256').update(text).digest('base64url')),
    time(n, () => createHash('sha1').update(text).digest('base64url')),
    time(n, () => createHash('md5').update(text).digest('base64url')),
    time(n, () => fnv1a(text)),
    crc32 ? time(n, () => crc32(text)) : NaN,
    time(n, () => JSON.stringify(value)),
    time(Math.ceil(n / 4), () => zlib.deflateRawSync(buf)),
    time(Math.ceil(n / 4), () => zlib.inflateRawSync(z)),
    z.length / buf.length,
    time(n, () => z.toString('base64')),
  ];
  console.log(row.map((x) => (typeof x === 'number' ? +x.toFixed(2) : x)).join(' | '));
}
