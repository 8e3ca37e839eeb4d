import { describe, expect, it } from 'vitest';
import { createServerClock, createServerClocks, SAMPLE_MAX_AGE_MS, SAMPLE_MAX_ROUND_TRIP_MS } from '../src/fast-paths/server-clock.js';

describe('server clock estimate', () => {
  it('knows nothing before its first sample, then carries the most advanced sample forward on the local clock', () => {
    let local = 500;
    const clock = createServerClock(() => local);
    expect(clock.now()).toBeUndefined();
    clock.sample(1_000_000);
    expect(clock.now()).toBe(1_000_000);
    local += 250.7;
    expect(clock.now()).toBe(1_000_250);
    // A reply read late (its stamp lags) does not pull the estimate back.
    clock.sample(1_000_100);
    expect(clock.now()).toBe(1_000_250);
    // A fresher one moves it on.
    clock.sample(1_000_300);
    expect(clock.now()).toBe(1_000_300);
  });

  it('forgets a sample past its trusted age, and lets a laggier one replace an old best after half of it', () => {
    let local = 0;
    const clock = createServerClock(() => local);
    clock.sample(2_000_000);
    local += SAMPLE_MAX_AGE_MS / 2 + 1;
    clock.sample(2_000_000); // the server's clock runs slower than this host's: the newer sample wins
    expect(clock.now()).toBe(2_000_000);
    local += SAMPLE_MAX_AGE_MS + 1;
    expect(clock.now()).toBeUndefined();
  });

  it('takes no sample from a reply read long after its request was sent (the process was stopped meanwhile)', () => {
    let local = 10_000;
    const clocks = createServerClocks(() => local);
    const clock = clocks.of('');
    // A request sent, then the process stopped (SIGSTOP, a paused VM) for 8 s before it read the reply: the
    // stamp is 8 s old when read, and records stamped with it would look stale to every other node.
    const sentAt = clocks.mark();
    local += 8000;
    clock.sample(5_000_000, sentAt);
    expect(clock.now()).toBeUndefined();
    // A reply read within the bound is a sample, the first one read after the stop included.
    const again = clocks.mark();
    local += SAMPLE_MAX_ROUND_TRIP_MS;
    clock.sample(5_008_100, again);
    expect(clock.now()).toBe(5_008_100);
    // A later late reply does not replace a fresh best either (nor an old one, past half the trusted age).
    local += SAMPLE_MAX_AGE_MS / 2 + 1;
    const late = clocks.mark() - SAMPLE_MAX_ROUND_TRIP_MS - 1;
    clock.sample(5_008_200, late);
    expect(clock.now()).toBe(5_008_100 + SAMPLE_MAX_AGE_MS / 2 + 1);
  });

  it('ignores samples that are no time', () => {
    const clock = createServerClock(() => 0);
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) clock.sample(bad);
    expect(clock.now()).toBeUndefined();
  });
});
