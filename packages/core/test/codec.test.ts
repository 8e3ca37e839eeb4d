import { deflateRawSync } from 'node:zlib';
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createEnvelopeCodec, FlightCorruptResultError, FlightResultTooLargeError, FlightValidationError } from '@flight/core';

const codec = createEnvelopeCodec({ compressAboveBytes: 64 });
const cap = { maxBytes: 1024 * 1024 };

describe('envelope codec', () => {
  it('encodeWithCopy gives the payload of encode and the value decode would give back for it', () => {
    const values = [undefined, null, 0, 'text', 'lone \ud800 surrogate', { a: [1, 2, { b: 'ü✓' }], d: new Date(0) }, 'x'.repeat(5000), [undefined]];
    for (const value of values) {
      const copy = codec.encodeWithCopy!(value, cap);
      const payload = codec.encode(value, cap);
      expect(copy.payload).toBe(payload);
      expect(copy.value).toStrictEqual(codec.decode(payload, cap));
    }
    expect(() => codec.encodeWithCopy!('y'.repeat(100), { maxBytes: 10 })).toThrow(FlightResultTooLargeError);
  });

  it('round-trips JSON values, small ones plain and large ones deflated', () => {
    for (const value of [null, 0, 'text', { a: [1, 2, { b: 'ü✓' }] }, [], true]) {
      const payload = codec.encode(value, cap);
      expect(payload.startsWith('f1.j.')).toBe(true);
      expect(codec.decode(payload, cap)).toEqual(value);
    }
    const big = { text: 'x'.repeat(10_000) };
    const payload = codec.encode(big, cap);
    expect(payload.startsWith('f1.z.')).toBe(true);
    expect(payload.length).toBeLessThan(1000);
    expect(codec.decode(payload, cap)).toEqual(big);
    expect(codec.decode(codec.encode(undefined, cap), cap)).toBeUndefined();
  });

  it('rejects a payload whose body or checksum was altered or truncated, never returning it', () => {
    const payload = codec.encode({ score: 7, comment: 'good answer' }, cap);
    const [prefix, flags, sum, body] = payload.split('.');
    const bytes = Buffer.from(body!, 'base64');
    bytes[3] = bytes[3]! ^ 1;
    const flipped = [prefix, flags, sum, bytes.toString('base64')].join('.');
    expect(() => codec.decode(flipped, cap)).toThrow(FlightCorruptResultError);
    expect(() => codec.decode(payload.slice(0, -4), cap)).toThrow(FlightCorruptResultError);
    expect(() => codec.decode(`${prefix}.${flags}.AAAA.${body}`, cap)).toThrow(FlightCorruptResultError);
    expect(() => codec.decode('not an envelope', cap)).toThrow(FlightCorruptResultError);
    expect(() => codec.decode(`f1.q.${sum}.${body}`, cap)).toThrow(FlightCorruptResultError);
  });

  it('enforces the size cap on encode and when a small payload inflates past it (no out-of-memory)', () => {
    expect(() => codec.encode('x'.repeat(2000), { maxBytes: 1000 })).toThrow(FlightResultTooLargeError);
    // A 10 MB bomb that deflates to about 10 KB, with a valid checksum.
    const bomb = deflateRawSync(Buffer.alloc(10 * 1024 * 1024, 32));
    const sum = createHash('sha256').update('z').update(bomb).digest('base64url').slice(0, 22);
    const payload = `f1.z.${sum}.${bomb.toString('base64')}`;
    expect(payload.length).toBeLessThan(20_000);
    expect(() => codec.decode(payload, { maxBytes: 1024 * 1024 })).toThrow(FlightResultTooLargeError);
  });

  it('refuses values that cannot be serialized with a validation error', () => {
    expect(() => codec.encode({ n: 10n }, cap)).toThrow(FlightValidationError);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => codec.encode(cyclic, cap)).toThrow(FlightValidationError);
  });
});
