import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseSwitchMaster, REPLACED_PRIMARY_FOR_MS, ReplacedPrimaries } from '../src/replaced-primaries';

const A = { host: '10.0.0.1', port: 6379 };
const B = { host: '10.0.0.2', port: 6379 };
const on = (address: { host: string; port: number }) => (old: { host: string; port: number }) =>
  old.host === address.host && old.port === address.port;

describe('the primaries the Sentinels replaced', () => {
  afterEach(() => vi.useRealTimers());

  it('reads a +switch-master message, and nothing from a malformed one', () => {
    expect(parseSwitchMaster('mymaster 10.0.0.1 6379 10.0.0.2 6379')).toEqual({ name: 'mymaster', old: A, promoted: B });
    for (const bad of ['', 'mymaster', 'mymaster 10.0.0.1 6379', 'mymaster 10.0.0.1 x 10.0.0.2 6379', 'mymaster 10.0.0.1 6379 10.0.0.2']) {
      expect(parseSwitchMaster(bad)).toBeUndefined();
    }
  });

  it('keeps a replaced primary away until a later switch names it primary again', () => {
    const replaced = new ReplacedPrimaries();
    expect(replaced.includes(on(A))).toBe(false);
    replaced.add(A, B);
    expect([replaced.includes(on(A)), replaced.includes(on(B))]).toEqual([true, false]);
    replaced.add(B, A);
    expect([replaced.includes(on(A)), replaced.includes(on(B))]).toEqual([false, true]);
  });

  it('keeps it away for REPLACED_PRIMARY_FOR_MS, no longer', () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const replaced = new ReplacedPrimaries();
    replaced.add(A, B);
    vi.setSystemTime(1_000_000 + REPLACED_PRIMARY_FOR_MS - 1);
    expect(replaced.includes(on(A))).toBe(true);
    vi.setSystemTime(1_000_000 + REPLACED_PRIMARY_FOR_MS);
    expect(replaced.includes(on(A))).toBe(false);
  });
});
