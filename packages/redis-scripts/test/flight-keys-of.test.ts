import { describe, expect, it } from 'vitest';
import { createFlightKeysOf, RunKeys } from '../src/flight-keys-of';
import { flightKeys, noticeChannel } from '../src/keys';

describe('createFlightKeysOf', () => {
  const ref = { stage: 'answer', key: 'q-1' };

  it("derives a flight's key, hash tag and notice channel", () => {
    const keys = createFlightKeysOf('app', 3)(ref);
    const expected = flightKeys('app', ref);
    expect(keys).toBeInstanceOf(RunKeys);
    expect([keys.tag, keys.meta, keys.list]).toEqual([expected.tag, expected.meta, expected.list]);
    expect(keys.channel).toBe(noticeChannel('app', expected.tag, 3));
  });

  it('takes the keys from a handle it made for the same ref, without deriving them again', () => {
    const keysOf = createFlightKeysOf('app', 0);
    const keys = keysOf(ref);
    expect(keysOf({ ...ref, handle: keys })).toBe(keys);
    expect(keysOf(ref, keys)).toBe(keys);
  });

  it("derives them again for a handle of another ref, another coordinator's, or a foreign value", () => {
    const keysOf = createFlightKeysOf('app', 0);
    const other = createFlightKeysOf('elsewhere', 0);
    const mine = keysOf(ref);
    for (const handle of [keysOf({ stage: 'answer', key: 'q-2' }), other(ref), { meta: 'forged' }, 'x', undefined]) {
      const keys = keysOf(ref, handle);
      expect(keys).not.toBe(handle);
      expect(keys.meta).toBe(mine.meta);
      expect(keys.channel).toBe(mine.channel);
    }
  });
});
