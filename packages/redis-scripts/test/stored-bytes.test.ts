/**
 * A result stored as bytes, read back from the flight's key as bytes (`resultBytesOf`): taken only while the
 * key still holds the SUCCEEDED record of the run the script answered about, cut after the record's text
 * fields counted in UTF-8 bytes.
 */
import { FlightCoordinationError } from '@flight/core';
import { transitions, type FlightMeta } from '@flight/core/adapter';
import { describe, expect, it } from 'vitest';
import { decodeStoredFlight, isBytesResult, resultBytesOf } from '../src/spine/reply.js';
import { encodeRecord } from '../src/spine/record.generated.js';

const input = {
  stage: 'stage',
  key: 'key',
  takeoverAfterMs: 3000,
  leaseTtlMs: 6000,
  maxRunMs: 20_000,
  ownerId: 'nœud-ä', // multi-byte UTF-8: the text fields are counted in bytes
  ownerToken: 'token-1',
  startRunning: true,
};

function stored(patch: Partial<FlightMeta>, result: Buffer): { meta: FlightMeta; bytes: Buffer } {
  const meta: FlightMeta = {
    ...transitions.newOwnerMeta(input, null, 1_700_000_000_000),
    status: 'SUCCEEDED',
    resultRef: 'result',
    ...patch,
  };
  return { meta, bytes: Buffer.concat([Buffer.from(encodeRecord(meta, false), 'utf8'), result]) };
}

// Deflated bytes are anything: bytes that are no valid UTF-8 among them.
const result = Buffer.concat([Buffer.from('f2.b.0badc0de.', 'latin1'), Buffer.from([0xff, 0xfe, 0x00, 0xc3, 0x28, 0x80, 0x7f])]);

describe('a result stored as bytes', () => {
  it('is cut whole from the key after the record when the key holds the SUCCEEDED record of that run', () => {
    const { meta, bytes } = stored({}, result);
    expect(resultBytesOf(bytes, meta.epoch)).toEqual(result);
  });

  it('is not taken from a key that holds another run, a record without a result, or no SUCCEEDED record', () => {
    const { meta, bytes } = stored({}, result);
    expect(resultBytesOf(bytes, meta.epoch + 1)).toBeUndefined();
    expect(resultBytesOf(stored({ resultRef: '' }, Buffer.alloc(0)).bytes, meta.epoch)).toBeUndefined();
    expect(resultBytesOf(stored({ status: 'RUNNING', resultRef: '' }, Buffer.alloc(0)).bytes, meta.epoch)).toBeUndefined();
    expect(resultBytesOf(Buffer.from('S12'), meta.epoch)).toBeUndefined();
  });

  it('is refused with the typed error when the record part is damaged', () => {
    const { meta, bytes } = stored({}, result);
    // The header intact, the length of the first text field destroyed.
    const damaged = Buffer.concat([bytes.subarray(0, 129), Buffer.from('x'), bytes.subarray(131)]);
    expect(() => resultBytesOf(damaged, meta.epoch)).toThrow(FlightCoordinationError);
  });

  it('reaches the client as text damaged past its ASCII head, which marks it to be read as bytes', () => {
    const { bytes } = stored({}, result);
    // What a client decoding the reply as UTF-8 hands over: the record intact, the result damaged.
    const asText = bytes.toString('utf8');
    const flight = decodeStoredFlight(asText, input);
    expect(flight.meta.ownerId).toBe('nœud-ä');
    expect(isBytesResult(flight.result)).toBe(true);
    expect(Buffer.from(flight.result as string, 'utf8')).not.toEqual(result);
    expect(isBytesResult('f2.z.0badc0de.AAAA')).toBe(false);
    expect(isBytesResult(undefined)).toBe(false);
  });
});
