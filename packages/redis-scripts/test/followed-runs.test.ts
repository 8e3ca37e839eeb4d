import { describe, expect, it } from 'vitest';
import { createFollowedRuns } from '../src/wake-up/followed-runs';

describe('createFollowedRuns', () => {
  it('remembers the last run joined per flight key', () => {
    const runs = createFollowedRuns();
    expect(runs.of('k')).toBeUndefined();
    runs.joined('k', { epoch: 1, nonce: 'a' });
    runs.joined('k', { epoch: 2, nonce: 'b' });
    runs.joined('other', { epoch: 7, nonce: 'c' });
    expect(runs.of('k')).toEqual({ epoch: 2, nonce: 'b' });
    expect(runs.of('other')).toEqual({ epoch: 7, nonce: 'c' });
  });

  it('keeps at most two generations of 4,096 flights: the oldest generation goes whole', () => {
    const runs = createFollowedRuns();
    for (let i = 0; i < 4096 * 2 + 1; i++) runs.joined(`k${i}`, { epoch: i, nonce: 'n' });
    // k0…k4095 were the older generation when k8192 started a third one.
    expect(runs.of('k0')).toBeUndefined();
    expect(runs.of('k4095')).toBeUndefined();
    expect(runs.of('k4096')).toEqual({ epoch: 4096, nonce: 'n' });
    expect(runs.of('k8192')).toEqual({ epoch: 8192, nonce: 'n' });
    // Joining a remembered flight again does not turn a generation over.
    runs.joined('k8192', { epoch: 9, nonce: 'm' });
    expect(runs.of('k4096')).toEqual({ epoch: 4096, nonce: 'n' });
  });
});
