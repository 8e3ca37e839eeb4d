import { deflateRawSync } from 'node:zlib';
import { createHash } from 'node:crypto';
import * as zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { createEnvelopeCodec, FlightCorruptResultError, FlightResultTooLargeError, FlightValidationError } from '@flight/core';
import { crc32Fallback } from '../src/codec/checksum.js';

const codec = createEnvelopeCodec({ compressAboveBytes: 64 });
const cap = { maxBytes: 1024 * 1024 };

describe('envelope codec', () => {
  it('encodeWithCopy gives the payload of encode and the value decode would give back for it', () => {
    const values = [
      undefined,
      null,
      0,
      -0,
      1.5,
      NaN,
      Infinity,
      true,
      false,
      'text',
      '"quoted"\n',
      'lone \ud800 surrogate',
      { a: [1, 2, { b: 'ü✓' }], d: new Date(0) },
      'x'.repeat(5000),
      [undefined],
    ];
    for (const value of values) {
      const copy = codec.encodeWithCopy!(value, cap);
      const payload = codec.encode(value, cap);
      expect(copy.payload).toBe(payload);
      expect(copy.value).toStrictEqual(codec.decode(payload, cap));
    }
    expect(() => codec.encodeWithCopy!('y'.repeat(100), { maxBytes: 10 })).toThrow(FlightResultTooLargeError);
  });

  it('stores small results as their JSON text (no base64) and large ones deflated', () => {
    for (const value of [null, 0, 'text', { a: [1, 2, { b: 'ü✓' }] }, [], true]) {
      const payload = codec.encode(value, cap);
      expect(payload).toMatch(/^f2\.j\.[0-9a-f]{8}\./);
      expect(payload.slice(14)).toBe(JSON.stringify(value));
      expect(codec.decode(payload, cap)).toEqual(value);
    }
    const big = { text: 'x'.repeat(10_000) };
    const payload = codec.encode(big, cap);
    expect(payload.startsWith('f2.z.')).toBe(true);
    expect(payload.length).toBeLessThan(1000);
    expect(codec.decode(payload, cap)).toEqual(big);
    expect(codec.decode(codec.encode(undefined, cap), cap)).toBeUndefined();
  });

  it('stores a deflated body as bytes without base64 when the coordinator stores bytes, and text otherwise', () => {
    const bytesCap = { ...cap, bytes: true };
    const big = { text: 'lorem ipsum dolor sit amet '.repeat(2000), n: [1, 2, 3] };
    const payload = codec.encode(big, bytesCap);
    expect(payload).toBeInstanceOf(Uint8Array);
    const stored = Buffer.from(payload as Uint8Array);
    expect(stored.toString('latin1', 0, 14)).toMatch(/^f2\.b\.[0-9a-f]{8}\.$/);
    // The same deflated bytes as the base64 body of the text form, without the base64.
    const text = codec.encode(big, cap);
    expect(stored.subarray(14)).toEqual(Buffer.from(text.slice(14), 'base64'));
    expect(stored.length).toBeLessThan(text.length * 0.8);
    expect(codec.decode(payload, cap)).toEqual(big);
    const copy = codec.encodeWithCopy(big, bytesCap);
    expect(Buffer.from(copy.payload as Uint8Array)).toEqual(stored);
    expect(copy.value).toEqual(big);
    // Small results stay text even when bytes are allowed: their JSON is stored as it is.
    expect(codec.encode({ a: 1 }, bytesCap)).toBe(codec.encode({ a: 1 }, cap));
    // Text handed back as bytes (a coordinator that returns everything as bytes) still decodes.
    expect(codec.decode(Buffer.from(codec.encode({ a: 1 }, cap)), cap)).toEqual({ a: 1 });
  });

  it('refuses a damaged, truncated or oversized byte payload with a typed error', () => {
    const big = { text: 'abc '.repeat(5000) };
    const stored = Buffer.from(codec.encode(big, { ...cap, bytes: true }) as Uint8Array);
    const flipped = Buffer.from(stored);
    flipped[flipped.length - 5] = flipped[flipped.length - 5]! ^ 0x01;
    expect(() => codec.decode(flipped, cap)).toThrow(FlightCorruptResultError);
    expect(() => codec.decode(stored.subarray(0, stored.length - 3), cap)).toThrow(FlightCorruptResultError);
    const badSum = Buffer.from(stored);
    badSum[6] = badSum[6] === 0x30 ? 0x31 : 0x30;
    expect(() => codec.decode(badSum, cap)).toThrow(FlightCorruptResultError);
    expect(() => codec.decode(stored, { maxBytes: 1000 })).toThrow(FlightResultTooLargeError);
    expect(() => codec.decode(Buffer.from('f2.b.'), cap)).toThrow(FlightCorruptResultError);
    expect(() => codec.decode(new Uint8Array([1, 2, 3]), cap)).toThrow(FlightCorruptResultError);
  });

  it('deflates only above compressAboveBytes (default 8 KiB)', () => {
    const defaults = createEnvelopeCodec();
    expect(defaults.encode('y'.repeat(8000), cap).startsWith('f2.j.')).toBe(true);
    expect(defaults.encode('y'.repeat(9000), cap).startsWith('f2.z.')).toBe(true);
  });

  it('still decodes version 1 payloads (f1: base64 body, SHA-256)', () => {
    const v1 = (flags: string, body: Buffer) =>
      `f1.${flags}.${createHash('sha256').update(flags).update(body).digest('base64url').slice(0, 22)}.${body.toString('base64')}`;
    const value = { score: 7, comment: 'good answer' };
    expect(codec.decode(v1('j', Buffer.from(JSON.stringify(value))), cap)).toEqual(value);
    expect(codec.decode(v1('z', deflateRawSync(Buffer.from(JSON.stringify(value)))), cap)).toEqual(value);
    const good = v1('j', Buffer.from('{"score":7}'));
    const tampered = `${good.slice(0, 5)}${good[5] === 'A' ? 'B' : 'A'}${good.slice(6)}`;
    expect(() => codec.decode(tampered, cap)).toThrow(FlightCorruptResultError);
  });

  it('rejects a payload whose body or checksum was altered or truncated, never returning it', () => {
    for (const value of [
      { score: 7, comment: 'good answer' },
      { text: 'x'.repeat(10_000), n: 1 },
    ]) {
      const payload = codec.encode(value, cap);
      const i = payload.length - 5;
      const flipped = payload.slice(0, i) + String.fromCharCode(payload.charCodeAt(i) ^ 1) + payload.slice(i + 1);
      expect(() => codec.decode(flipped, cap)).toThrow(FlightCorruptResultError);
      expect(() => codec.decode(payload.slice(0, -4), cap)).toThrow(FlightCorruptResultError);
      expect(() => codec.decode(`${payload.slice(0, 5)}00000000${payload.slice(13)}`, cap)).toThrow(FlightCorruptResultError);
      expect(() => codec.decode(`f2.q${payload.slice(4)}`, cap)).toThrow(FlightCorruptResultError);
    }
    expect(() => codec.decode('not an envelope', cap)).toThrow(FlightCorruptResultError);
  });

  it('computes the same CRC-32 with or without zlib.crc32 (Node < 20.15 verifies payloads of newer nodes)', () => {
    const native = (zlib as unknown as { crc32?: (d: string, v?: number) => number }).crc32;
    for (const text of ['', 'j.', 'hello', 'ü✓ lone \ud800', 'x'.repeat(5000)]) {
      expect(crc32Fallback(text)).toBe(crc32Fallback(text.slice(2), crc32Fallback(text.slice(0, 2))));
      if (native) expect(crc32Fallback(text, 7)).toBe(native(text, 7));
    }
    expect(crc32Fallback('123456789')).toBe(0xcbf43926); // the CRC-32 check value
  });

  it('enforces the size cap on encode and when a small payload inflates past it (no out-of-memory)', () => {
    expect(() => codec.encode('x'.repeat(2000), { maxBytes: 1000 })).toThrow(FlightResultTooLargeError);
    expect(() => codec.decode(codec.encode('x'.repeat(2000), cap), { maxBytes: 1000 })).toThrow(FlightResultTooLargeError);
    // A 10 MB bomb that deflates to about 10 KB, with a valid checksum, in both versions.
    const bomb = deflateRawSync(Buffer.alloc(10 * 1024 * 1024, 32));
    const sum = createHash('sha256').update('z').update(bomb).digest('base64url').slice(0, 22);
    const v1 = `f1.z.${sum}.${bomb.toString('base64')}`;
    expect(v1.length).toBeLessThan(20_000);
    expect(() => codec.decode(v1, { maxBytes: 1024 * 1024 })).toThrow(FlightResultTooLargeError);
    const body = bomb.toString('base64');
    const v2 = `f2.z.${crc32Fallback(body, crc32Fallback('z.')).toString(16).padStart(8, '0')}.${body}`;
    expect(() => codec.decode(v2, { maxBytes: 1024 * 1024 })).toThrow(FlightResultTooLargeError);
  });

  it('refuses values that cannot be serialized with a validation error', () => {
    expect(() => codec.encode({ n: 10n }, cap)).toThrow(FlightValidationError);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => codec.encode(cyclic, cap)).toThrow(FlightValidationError);
  });
});
