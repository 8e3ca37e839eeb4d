import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildFlightKey, FlightValidationError, hashPart } from '@flight/core';
import { assertRequestKey } from '../src/keys/key-builder.js';

describe('flight keys', () => {
  it('keeps short safe parts readable and hashes free text', () => {
    expect(buildFlightKey('interview-evaluation', ['s-1', 3, hashPart('my answer')])).toBe(
      `interview-evaluation:s-1:3:${hashPart('my answer')}`,
    );
    const key = buildFlightKey('interview-extraction', ['s-1', 'https://files.example/cv.pdf']);
    expect(key).toMatch(/^interview-extraction:s-1:~[A-Za-z0-9_-]{32}$/);
    expect(buildFlightKey('x', ['a'.repeat(65)])).toMatch(/^x:~/);
  });

  it('never gives two different part lists the same key', () => {
    expect(buildFlightKey('s', ['a:b', 'c'])).not.toBe(buildFlightKey('s', ['a', 'b:c']));
    expect(buildFlightKey('s', ['~x'])).not.toBe(buildFlightKey('s', ['x']));
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.string(), fc.integer()), { minLength: 1, maxLength: 4 }),
        fc.array(fc.oneof(fc.string(), fc.integer()), { minLength: 1, maxLength: 4 }),
        (a, b) => {
          const same = a.length === b.length && a.every((part, i) => String(part) === String(b[i]));
          if (!same) expect(buildFlightKey('s', a)).not.toBe(buildFlightKey('s', b));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('validates stages, parts and raw keys with typed errors', () => {
    expect(() => buildFlightKey('', ['a'])).toThrow(FlightValidationError);
    expect(() => buildFlightKey('bad stage', ['a'])).toThrow(FlightValidationError);
    expect(() => buildFlightKey('s', [])).toThrow(FlightValidationError);
    expect(() => buildFlightKey('s', [Number.NaN])).toThrow(FlightValidationError);
    expect(() => buildFlightKey('s', [{} as never])).toThrow(FlightValidationError);
    expect(() => assertRequestKey('', 's')).toThrow(FlightValidationError);
    expect(() => assertRequestKey('x'.repeat(1025), 's')).toThrow(FlightValidationError);
    expect(() => assertRequestKey('a\0b', 's')).toThrow(FlightValidationError);
    expect(() => assertRequestKey('{a}:b c\n*', 's')).not.toThrow();
    try {
      buildFlightKey('s', []);
    } catch (error) {
      expect((error as FlightValidationError).code).toBe('E_FLIGHT_VALIDATION');
    }
  });
});
