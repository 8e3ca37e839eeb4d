/**
 * The numbers of a record's header: every time, epoch and count written zero-padded to its width, as the
 * scripts' `string.format('%0Nd')` does, whatever the number's size (`encodeRecord` prints those of 10
 * digits or more in two halves; see record.generated.ts). The Lua comparison is record-encoder.test.ts
 * in the adapters; this one covers the edges of the halves: 7 low zeros, 10^9, the largest values.
 */
import fc from 'fast-check';
import type { FlightMeta } from '@flight/core/adapter';
import { describe, expect, it } from 'vitest';
import { encodeRecord, RECORD_HEADER } from '../src/spine/record.generated';
import { runningMeta } from './running-meta';

const padded = (n: number, width: number) => String(n).padStart(width, '0');

function meta(times: number[], epoch: number, counts: [number, number], forgottenEpoch: number): FlightMeta {
  const [updatedAt, expireAt, heartbeatAt, deadlineAt, createdAt] = times as [number, number, number, number, number];
  return runningMeta({
    epoch,
    takeovers: counts[0],
    followers: counts[1],
    createdAt,
    updatedAt,
    heartbeatAt,
    expireAt,
    deadlineAt,
    forgottenEpoch,
  });
}

const field = (record: string, name: keyof typeof RECORD_HEADER) => {
  const [at, width] = RECORD_HEADER[name];
  return record.slice(at, at + width);
};

/** Integers around the places where the two halves meet, and anywhere in range. */
const integer = (max: number) =>
  fc
    .oneof(
      fc.integer({ min: 0, max }),
      fc.constantFrom(0, 9, 999_999_999, 1_000_000_000, 10_000_000_000, 1_760_000_000_000, 1_760_000_010_000_000, max),
      fc.integer({ min: 0, max: Math.floor(max / 1e7) }).map((high) => high * 1e7),
    )
    .filter((n) => n <= max);

describe('encodeRecord: header numbers', () => {
  it('are zero-padded to their width, whatever their size', () => {
    const maxTime = 9_999_999_999_999;
    fc.assert(
      fc.property(
        fc.array(integer(maxTime), { minLength: 5, maxLength: 5 }),
        integer(Number.MAX_SAFE_INTEGER),
        fc.tuple(fc.integer({ min: 0, max: 999_999 }), fc.integer({ min: 0, max: 999_999 })),
        integer(Number.MAX_SAFE_INTEGER),
        (times, epoch, counts, forgotten) => {
          const record = encodeRecord(meta(times, epoch, counts, forgotten), false);
          const [updatedAt, expireAt, heartbeatAt, deadlineAt, createdAt] = times as [number, number, number, number, number];
          expect({
            updatedAt: field(record, 'updatedAt'),
            expireAt: field(record, 'expireAt'),
            heartbeatAt: field(record, 'heartbeatAt'),
            deadlineAt: field(record, 'deadlineAt'),
            createdAt: field(record, 'createdAt'),
            epoch: field(record, 'epoch'),
            takeovers: field(record, 'takeovers'),
            followers: field(record, 'followers'),
            forgottenEpoch: field(record, 'forgottenEpoch'),
          }).toEqual({
            updatedAt: padded(updatedAt, 13),
            expireAt: padded(expireAt, 13),
            heartbeatAt: padded(heartbeatAt, 13),
            deadlineAt: padded(deadlineAt, 13),
            createdAt: padded(createdAt, 13),
            epoch: padded(epoch, 16),
            takeovers: padded(counts[0], 6),
            followers: padded(counts[1], 6),
            forgottenEpoch: padded(forgotten, 16),
          });
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('prints a value that is not a safe integer as String does, as before the halves', () => {
    const old = (n: number, width: number) => String(Math.trunc(n)).padStart(width, '0');
    for (const odd of [Number.NaN, Number.POSITIVE_INFINITY, 2 ** 60, -5]) {
      const record = encodeRecord(meta([odd, 0, 0, 0, 0], odd, [0, 0], odd), false);
      expect(field(record, 'epoch')).toBe(old(odd, 16).slice(0, 16));
    }
  });

  it('keeps fractions out: a time of a fraction of a millisecond is written whole', () => {
    const record = encodeRecord(meta([1_760_000_000_123.9, 5.5, 0, 1e9 + 0.5, 1_760_000_000_000], 7, [0, 0], 0), false);
    expect(field(record, 'updatedAt')).toBe('1760000000123');
    expect(field(record, 'expireAt')).toBe('0000000000005');
    expect(field(record, 'deadlineAt')).toBe('0001000000000');
  });
});
