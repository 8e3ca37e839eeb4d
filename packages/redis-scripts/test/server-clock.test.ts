import { describe, expect, it } from 'vitest';
import { createServerClock, SAMPLE_FRESH_MS, SAMPLE_MAX_AGE_MS } from '../src/server-clock.js';

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

  it('stands in for the server time of an owner write only while its sample is fresh (half its trusted age)', () => {
    let local = 0;
    const clock = createServerClock(() => local);
    expect(clock.fresh()).toBeUndefined();
    clock.sample(3_000_000);
    local += SAMPLE_FRESH_MS;
    expect(clock.fresh()).toBe(3_000_000 + SAMPLE_FRESH_MS);
    local += 1;
    // Too old to stand in for TIME, still trusted for the fast acquire: the write asks TIME and samples again.
    expect(clock.fresh()).toBeUndefined();
    expect(clock.now()).toBe(3_000_000 + SAMPLE_FRESH_MS + 1);
    // That sample lags the estimate, and replaces it all the same, so the estimate is fresh again.
    clock.sample(3_000_000 + SAMPLE_FRESH_MS - 5);
    expect(clock.fresh()).toBe(3_000_000 + SAMPLE_FRESH_MS - 5);
  });

  it('ignores samples that are no time', () => {
    const clock = createServerClock(() => 0);
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) clock.sample(bad);
    expect(clock.now()).toBeUndefined();
  });
});
