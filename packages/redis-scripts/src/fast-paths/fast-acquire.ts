/**
 * The fast acquire: a flight nobody has started is created by one plain `SET key record PXAT <lease end> NX
 * GET` instead of the acquire script. Redis runs that SET in about a tenth of the script's time (no Lua call,
 * no `TIME`, no record built in Lua), and most acquires in production are exactly this case: a key
 * nobody else asked for.
 *
 * The record is the one the script would write (transitions.ts `newOwnerMeta`, encoded by the generated
 * `encodeRecord`), stamped with the server clock as this process last saw it (server-clock.ts). When the
 * SET finds a record instead, GET hands it back in the same round trip and the rules of
 * transitions.ts `acquire` decide on it here if they need no write (a replay, the same owner again);
 * anything else — a follower to count, a run to take over, a record at the edge of its lifetime — is
 * left to the script, which decides on the server clock.
 *
 * A stage that mostly joins running flights (join-predictor.ts) skips the SET: the script answers it in
 * one round trip.
 */
import { transitions, type AcquireInput, type AcquireReply } from '@flight/core/adapter';
import type { RedisDriver } from '../driver';
import { encodeRecord } from '../spine/record.generated';
import { decodeStoredFlight } from '../spine/reply';
import { wholeLeaseTerms } from '../spine/script-args';
import type { JoinPredictor } from './join-predictor';
import type { FastPath } from './fast-path';
import type { RunKeys } from '../flight-keys-of';
import { recordNow, type ServerClock } from './server-clock';

/**
 * How close to a record's expiry (ms) the estimated clock may be for the decision to be made here: nearer
 * than that, the script decides on the server clock.
 */
export const FAST_ACQUIRE_EXPIRY_MARGIN_MS = 1000;

/**
 * The fast acquire stamps a new record (its lease and its epoch) with this process's estimate of the server
 * clock at the time the SET was sent, where the script stamps the time it runs. The two may differ by the
 * estimate's lag plus the time the SET took to run; each is kept within this bound (ms): an estimate that
 * may trail by more is not used (the script runs), and a SET whose reply took longer is confirmed by the
 * server clock before its run starts (coordinator.ts, `confirmLateOwner`).
 *
 * So an epoch the fast acquire gives is above every earlier run's of the key (epochs only grow): an earlier
 * run with an epoch at or above it would have been created less than twice the bound before this SET ran,
 * and be gone already (the SET found no key) — which a key that lives at least twice the bound (the
 * stage's shortest TTL, `AcquireInput.minRecordTtlMs`) cannot be. A stage with a shorter TTL uses the script.
 */
export const FAST_ACQUIRE_SLACK_MS = 250;

/**
 * The acquire of an input on its keys by SET NX GET (fast-path.ts): declined at once when it is not for
 * this path, after the SET when it found a flight the rules here cannot decide on. A run it creates is
 * left on `keys.untouched` (untouched-complete.ts).
 */
export type FastAcquire = FastPath<[input: AcquireInput, keys: RunKeys], AcquireReply>;

export interface FastAcquireDeps {
  setIfAbsent: NonNullable<RedisDriver['setIfAbsent']>;
  /** The clock of the server holding `key`; undefined while that server is unknown. */
  serverClock: (key: string) => ServerClock | undefined;
  /** The test clock, when the coordinator has one: it is the clock of record, exact. */
  testClock: (() => number) | undefined;
  predictor: JoinPredictor;
}

export function createFastAcquire({ setIfAbsent, serverClock, testClock, predictor }: FastAcquireDeps): FastAcquire {
  return {
    attempt(input, keys) {
      const key = keys.meta;
      // A poll of a run already joined, or a stage that mostly joins: the script's one round trip.
      if (input.joinEpoch !== undefined || predictor.joins(input.stage)) return undefined;
      // Epochs only grow (see FAST_ACQUIRE_SLACK_MS): a stage whose records may live shorter than the slack,
      // or an estimate that may trail by more than it (no `now` then), is left to the script.
      if (!testClock && (input.minRecordTtlMs ?? Infinity) < 2 * FAST_ACQUIRE_SLACK_MS) return undefined;
      const now = recordNow(testClock, serverClock, key, FAST_ACQUIRE_SLACK_MS);
      // Terms the script would refuse are refused by it, with its error.
      if (now === undefined || !(input.leaseTtlMs >= 1 && input.maxRunMs >= 0 && input.takeoverAfterMs >= 0)) return undefined;
      if (!Number.isFinite(input.leaseTtlMs + input.maxRunMs + input.takeoverAfterMs)) return undefined;
      const whole = wholeLeaseTerms(input);
      const meta = transitions.newOwnerMeta(whole, null, now);
      const record = encodeRecord(meta, false);
      // On the server clock the key expires when its record does: Redis keeps a key through its PXAT
      // millisecond, the scripts count a lease as over from its expireAt, hence PXAT expireAt - 1. A command
      // that ran late, or an estimate that trails the server, never leaves a key that outlives its lease on
      // the master that wrote it (untouched-complete.ts relies on it; a slot migrated to a master whose clock
      // differs carries the key's remaining TTL, the script's keys alike). A test clock is no server time:
      // the key then lives the lease from when it is set.
      const expireAt = testClock ? undefined : meta.expireAt - 1;
      return setIfAbsent(key, record, whole.leaseTtlMs, expireAt).then((stored): AcquireReply | undefined => {
        if (stored === null) keys.untouched = { record, meta };
        const decided: AcquireReply | undefined =
          stored === null ? { outcome: 'OWNER_NEW', meta } : decide(stored, input, now, testClock !== undefined);
        // Undecided: the script decides, and the stage learns from its answer.
        if (decided) predictor.learn(input.stage, decided.outcome);
        return decided;
      });
    },
  };
}

/** The reply the rules give on `stored` (a flight as GET reads it) when they need no write; else undefined. */
function decide(stored: string, input: AcquireInput, now: number, exact: boolean): AcquireReply | undefined {
  let record;
  try {
    record = decodeStoredFlight(stored, input);
  } catch {
    return undefined; // not a record this version reads: the script's rules say what becomes of it
  }
  // The estimate may trail the server: near the record's expiry the server clock decides.
  if (!exact && Math.abs(record.meta.expireAt - now) <= FAST_ACQUIRE_EXPIRY_MARGIN_MS) return undefined;
  const decided = transitions.acquire(record, input, now);
  return decided.next ? undefined : decided.reply;
}
