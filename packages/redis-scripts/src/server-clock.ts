/**
 * This process's view of a Redis server's clock, so that the writes of an owner flight need not ask the
 * server for `TIME`: the fast acquire (fast-acquire.ts), which is no script, stamps a new flight's record
 * with it, and the owner's scripts (complete, fail, heartbeat, markRunning) are handed it as their `now`
 * while a sample is fresh (`fresh`). On a cluster each master has its own (`ServerClocks`), sampled from
 * replies about keys it holds.
 *
 * Every owner write a script answers (complete, fail, heartbeat, markRunning, a fresh acquire) carries
 * the server's `now` (the record's `updatedAt`); each is a sample. The estimate is the most advanced
 * sample carried forward on the local monotonic clock, so it trails the server by at most the time a
 * reply took to come back and be read (an estimate can only lag: the server stamped the reply before it
 * was sent). It is there only while samples keep coming: past `SAMPLE_MAX_AGE_MS` without one (an idle
 * process, a paused VM) it is gone and the next acquire asks the script, whose reply samples again. An
 * owner write handed the estimate stamps its record with it: that reply is no sample. Past
 * `SAMPLE_FRESH_MS` the owner's next write asks `TIME` again, so its reply keeps the estimate sampled.
 */

/** How long a sample is trusted, carried forward on the local monotonic clock. */
export const SAMPLE_MAX_AGE_MS = 5000;

/**
 * How long a sample stands in for the server's `TIME` in an owner write: half its trusted age, when a
 * laggier sample may replace it (so the write that asks `TIME` again always refreshes the estimate).
 */
export const SAMPLE_FRESH_MS = SAMPLE_MAX_AGE_MS / 2;

export interface ServerClock {
  /** The server's time now in whole ms, or undefined when no recent sample vouches for it. */
  now(): number | undefined;
  /** `now()`, but only while the sample it carries forward is at most `SAMPLE_FRESH_MS` old. */
  fresh(): number | undefined;
  /** A time the server stamped a reply with (epoch ms), seen just now. */
  sample(serverNow: number): void;
}

/** `monotonic`: the local monotonic clock in ms (performance.now by default; tests pass their own). */
export function createServerClock(monotonic: () => number = () => performance.now()): ServerClock {
  let offset = 0;
  let sampledAt = Number.NEGATIVE_INFINITY;
  const within = (maxAgeMs: number): number | undefined => {
    const local = monotonic();
    if (local - sampledAt > maxAgeMs) return undefined;
    return Math.trunc(local + offset);
  };
  return {
    now: () => within(SAMPLE_MAX_AGE_MS),
    fresh: () => within(SAMPLE_FRESH_MS),
    sample(serverNow) {
      if (!Number.isFinite(serverNow) || serverNow <= 0) return;
      const local = monotonic();
      const next = serverNow - local;
      // The most advanced sample wins (each one lags by its reply's way back); an older best is replaced
      // after half its trusted age, so the estimate follows the server's rate, not this host's.
      if (next >= offset || local - sampledAt > SAMPLE_FRESH_MS) {
        offset = next;
        sampledAt = local;
      }
    },
  };
}

/** The clock of each server (a cluster's masters), by the name `RedisDriver.clockOf` gives it. */
export interface ServerClocks {
  /** The clock of `server` ('' for a standalone server). */
  of(server: string): ServerClock;
}

export function createServerClocks(monotonic?: () => number): ServerClocks {
  const clocks = new Map<string, ServerClock>();
  return {
    of(server) {
      let clock = clocks.get(server);
      if (!clock) clocks.set(server, (clock = createServerClock(monotonic)));
      return clock;
    },
  };
}
