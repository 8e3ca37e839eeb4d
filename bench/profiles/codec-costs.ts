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
console.log(
  'bytes | sha256 µs | sha1 µs | md5 µs | fnv1a(js) µs | zlib.crc32 µs | stringify µs | deflate µs | inflate µs | deflated/raw | base64 µs',
);
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

// Whole codec, version 1 (base64 + SHA-256, deflate above 1 KiB) against version 2 (this package), and
// the deep freeze every shared value gets, on fresh values (the freeze of a value seen before is O(1)).
const { createEnvelopeCodec } = await import('../../packages/core/src/codec/envelope-codec.ts');
const { deepFreeze } = await import('../../packages/core/src/results/deep-freeze.ts');
const v1 = (value: unknown) => {
  const raw = Buffer.from(JSON.stringify(value));
  const flags = raw.length > 1024 ? 'z' : 'j';
  const body = flags === 'z' ? zlib.deflateRawSync(raw) : raw;
  return `f1.${flags}.${createHash('sha256').update(flags).update(body).digest('base64url').slice(0, 22)}.${body.toString('base64')}`;
};
const codec = createEnvelopeCodec();
const cap = { maxBytes: 8 * 1024 * 1024 };
console.log('\nbytes | v1 encode µs | v1 payload B | v2 encode µs | v2 payload B | v2 decode µs | deepFreeze (fresh) µs');
for (const bytes of [256, 1024, 4096, 16384, 102400]) {
  const value = makePayload(bytes);
  const n = bytes > 10000 ? 300 : 5000;
  const p1 = v1(value);
  const p2 = codec.encode(value, cap);
  const fresh = Array.from({ length: n + 2000 }, () => JSON.parse(JSON.stringify(value)));
  let i = 0;
  console.log(
    [
      JSON.stringify(value).length,
      time(n, () => v1(value)),
      p1.length,
      time(n, () => codec.encode(value, cap)),
      p2.length,
      time(n, () => codec.decode(p2, cap)),
      time(n, () => deepFreeze(fresh[i++])),
    ]
      .map((x) => +x.toFixed(2))
      .join(' | '),
  );
}
