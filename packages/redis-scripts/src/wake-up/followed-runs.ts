/**
 * The run this process last followed on each recent flight, from its `FOLLOWER_WAIT` reply: the flight's
 * notices carry that run's nonce, so a wait on it — the one right after the acquire, or any later one —
 * takes the result a notice carries and re-reads with `read` instead of marking the record watched.
 * Written only by followers: an owner flight on a key nobody else wants leaves nothing here.
 */

/** Flights remembered per generation. */
const FOLLOWED_RUNS_SIZE = 4096;

export interface FollowedRun {
  epoch: number;
  nonce: string;
}

export interface FollowedRuns {
  /** Notes that this process joined run `run` of the flight stored at `key`. */
  joined(key: string, run: FollowedRun): void;
  /** The run this process last joined on the flight at `key`, if it is still remembered. */
  of(key: string): FollowedRun | undefined;
}

/**
 * Two generations of at most FOLLOWED_RUNS_SIZE each: when the newer fills up it becomes the older and the
 * older is dropped whole (evicting one oldest entry at a time from a Map walks over the holes earlier
 * deletions left).
 */
export function createFollowedRuns(): FollowedRuns {
  let recent = new Map<string, FollowedRun>();
  let older = new Map<string, FollowedRun>();
  return {
    joined(key, run) {
      if (!recent.has(key) && recent.size >= FOLLOWED_RUNS_SIZE) {
        older = recent;
        recent = new Map();
      }
      recent.set(key, run);
    },
    of(key) {
      return recent.get(key) ?? older.get(key);
    },
  };
}
