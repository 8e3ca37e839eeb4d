/**
 * This process's view of a Redis server's clock, for the one write that is not a script: the fast
 * acquire (fast-acquire.ts) stamps a new flight's record with it instead of asking `TIME`. On a cluster
 * each master has its own (`ServerClocks`), sampled from replies about keys it holds.
 *
 * Every owner write a script answers (complete, fail, heartbeat, markRunning, a fresh acquire) carries
 * the server's `now` (the record's `updatedAt`); each is a sample — but for a repeated complete or fail
 * that found its outcome stored (the script marks it `unchanged`: its record holds the first write's time). The estimate is the most advanced
 * sample carried forward on the local monotonic clock, so it trails the server by at most the time a
 * reply took to come back and be read (an estimate can only lag: the server stamped the reply before it
 * was sent). A reply that took longer than `SAMPLE_MAX_ROUND_TRIP_MS` from its request to its reading is
 * no sample: this process may have been stopped (SIGSTOP, a paused VM, a long GC) while the reply waited,
 * and its stamp would then lag by all that time — new records stamped with it would look stale to every
 * other node at once. It is there only while samples keep coming: past `SAMPLE_MAX_AGE_MS` without one (an
 * idle process, a paused VM) it is gone and the next acquire asks the script, whose reply samples again.
 */
import type { RedisDriver } from '../driver';

/** How long a sample is trusted, carried forward on the local monotonic clock. */
export const SAMPLE_MAX_AGE_MS = 5000;

/** The longest round trip (request sent → reply read) whose reply still counts as a sample. */
export const SAMPLE_MAX_ROUND_TRIP_MS = 1000;

export interface ServerClock {
  /**
   * The server's time now in whole ms, or undefined when no recent sample vouches for it — or, with
   * `maxLagMs`, when the estimate may trail the server by more than that: the round trip of the sample it
   * rests on (the server stamped its reply at most that long before it was read).
   */
  now(maxLagMs?: number): number | undefined;
  /**
   * A time the server stamped a reply with (epoch ms), read just now, for a request sent at `sentAt` (the
   * local monotonic time, `ServerClocks.mark()`): ignored when that round trip took longer than
   * `SAMPLE_MAX_ROUND_TRIP_MS`.
   */
  sample(serverNow: number, sentAt?: number): void;
}

/**
 * Now on the clock of record for the writes that are no script (fast-acquire.ts, untouched-complete.ts):
 * the test clock when the coordinator has one (exact), else this process's estimate of the clock of the
 * server holding `key` (undefined while it has none).
 */
export function recordNow(
  testClock: (() => number) | undefined,
  serverClock: (key: string) => ServerClock | undefined,
  key: string,
  maxLagMs?: number,
): number | undefined {
  return testClock ? Math.trunc(testClock()) : serverClock(key)?.now(maxLagMs);
}

/** The local monotonic clock in ms: the default of `createServerClock` and `createServerClocks`. */
const localMonotonic = (): number => performance.now();

/** `monotonic`: the local monotonic clock in ms (performance.now by default; tests pass their own). */
export function createServerClock(monotonic: () => number = localMonotonic): ServerClock {
  let offset = 0;
  let sampledAt = Number.NEGATIVE_INFINITY;
  let lagBound = Number.POSITIVE_INFINITY;
  return {
    now(maxLagMs = Number.POSITIVE_INFINITY) {
      const local = monotonic();
      if (local - sampledAt > SAMPLE_MAX_AGE_MS || lagBound > maxLagMs) return undefined;
      return Math.trunc(local + offset);
    },
    sample(serverNow, sentAt) {
      if (!Number.isFinite(serverNow) || serverNow <= 0) return;
      const local = monotonic();
      if (sentAt !== undefined && local - sentAt > SAMPLE_MAX_ROUND_TRIP_MS) return;
      const next = serverNow - local;
      // The most advanced sample wins (each one lags by its reply's way back); an older best is replaced
      // after half its trusted age, so the estimate follows the server's rate, not this host's.
      if (next >= offset || local - sampledAt > SAMPLE_MAX_AGE_MS / 2) {
        offset = next;
        sampledAt = local;
        lagBound = sentAt === undefined ? SAMPLE_MAX_ROUND_TRIP_MS : local - sentAt;
      }
    },
  };
}

/** The clock of each server (a cluster's masters), by the name `RedisDriver.clockOf` gives it. */
export interface ServerClocks {
  /** The clock of `server` ('' for a standalone server). */
  of(server: string): ServerClock;
  /** The local monotonic time, as `sentAt` of a request whose reply may be a sample. */
  mark(): number;
}

export function createServerClocks(monotonic: () => number = localMonotonic): ServerClocks {
  const clocks = new Map<string, ServerClock>();
  return {
    of(server) {
      let clock = clocks.get(server);
      if (!clock) clocks.set(server, (clock = createServerClock(monotonic)));
      return clock;
    },
    mark: monotonic,
  };
}

/** The clock of the server that holds a key (the one server when standalone); undefined while that server is unknown. */
export function serverClockOf(driver: Pick<RedisDriver, 'clockOf'>, clocks: ServerClocks): (key: string) => ServerClock | undefined {
  const clockOf = driver.clockOf?.bind(driver);
  return (key) => {
    const server = clockOf ? clockOf(key) : '';
    return server === undefined ? undefined : clocks.of(server);
  };
}
