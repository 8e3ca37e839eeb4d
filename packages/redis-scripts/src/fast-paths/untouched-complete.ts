/**
 * The untouched complete: a run that nobody touched since the fast acquire created it (no follower
 * joined, no waiter watches it, no owner write since) completes with one plain
 * `SET key <SUCCEEDED record + result> PX ttl IFEQ <the record as the acquire wrote it>` instead of the
 * complete script. Redis runs that SET in a fraction of the script's time: most of the script's cost is
 * the floor of any Lua call that reads and writes a key (bench/profiles/redis.md), and distinct
 * keys — most calls in production — are exactly such runs.
 *
 * Why the comparison is the fence: the record holds the owner's id and token, the run's epoch, its
 * forgotten mark and its listener counts, and every script that changes any of them rewrites the record.
 * A record still equal to the one written is the run as acquired: the same owner, not forgotten, not
 * taken over, nobody to notify. The new record is the one transitions.ts `complete` gives on it, encoded
 * by the generated `encodeRecord` (what the script would write byte for byte: the conformance suite
 * compares them). When the SET finds anything else it writes nothing, and the script decides.
 *
 * Time: the script stamps the record with the server's clock when it runs; this SET carries the owner's
 * estimate of that clock when it was sent (server-clock.ts), and `PX ttl` counts from when it runs. A SET
 * delayed on its way (a stall, `CLIENT PAUSE`) keeps its result for that much less than the script would.
 * Three rules keep the difference harmless. The run's key expires exactly when its lease does (the fast
 * acquire sets it with `PXAT`, on the clock of the master that holds it), so the SET can only land while
 * the lease holds by that server's clock, as the script requires. The path is taken only when the result
 * outlives the lease (`now + resultTtlMs >= lease end`), so a result it stores is never dead on arrival.
 * And a reply that comes back late (after `SAMPLE_MAX_ROUND_TRIP_MS`: the SET may have waited that long
 * before it ran) is followed by the same SET stamped anew, conditional on the value just written, until
 * one comes back in time: the result is then kept `resultTtlMs` from a stamp at most that far behind the
 * server, as the script would keep it (an idempotent request retried late still finds it).
 *
 * The conditional SET exists from Valkey 8.1 and Redis 8.4. On an older server the same write goes by a
 * small script that compares and sets (compare-and-set.ts), still far cheaper than the complete script.
 */
import { transitions, type Fence, type StoredResult, type WriteReply } from '@flight/core/adapter';
import type { CompareAndSet } from './compare-and-set';
import type { FastPath } from './fast-path';
import type { RunKeys, UntouchedRecord } from '../flight-keys-of';
import { digits, RECORD_HEADER } from '../spine/record.generated';
import { recordNow, SAMPLE_MAX_ROUND_TRIP_MS, type ServerClock } from './server-clock';
import { FAST_ACQUIRE_EXPIRY_MARGIN_MS } from './fast-acquire';

/** The largest time a record holds (13 digits): a later expiry is the script's to clamp. */
const MAX_RECORD_TIME = 9_999_999_999_999;

export type { UntouchedRecord } from '../flight-keys-of';

/**
 * The complete of a fence by one conditional SET (fast-path.ts): declined at once when it is not for this
 * path, after the SET when it wrote nothing (the record changed since it was written).
 */
export type UntouchedComplete = FastPath<[fence: Fence, keys: RunKeys, result: StoredResult, resultTtlMs: number], WriteReply>;

export interface UntouchedCompleteDeps {
  /** The conditional SET, or the script that does its work where the server lacks it. */
  compareAndSet: CompareAndSet;
  /** The clock of the server holding `key`; undefined while that server is unknown. */
  serverClock: (key: string) => ServerClock | undefined;
  /** The test clock, when the coordinator has one: it is the clock of record, exact. */
  testClock: (() => number) | undefined;
  /** Sends the command under the coordinator's deadline and error mapping (`ScriptCalls.sent`). */
  sent: <T>(operation: string, fence: Fence, command: Promise<T>) => Promise<T>;
  /** The local monotonic time (`ServerClocks.mark`): how long a reply took. */
  mark: () => number;
}

/** Restamps after a late reply, at most: a server that keeps every reply late leaves the last stamp. */
const MAX_RESTAMPS = 3;

/** Where the header fields a complete changes sit (record.generated.ts): checked once, below. */
const [UPDATED_AT, TIME_WIDTH] = RECORD_HEADER.updatedAt;
const [EXPIRE_AT, EXPIRE_WIDTH] = RECORD_HEADER.expireAt;
const [RESULT_REF_AT, RESULT_REF_WIDTH] = RECORD_HEADER.resultRef;
if (
  RECORD_HEADER.status[0] !== 0 ||
  RECORD_HEADER.status[1] !== 1 ||
  UPDATED_AT !== 1 ||
  EXPIRE_AT !== UPDATED_AT + TIME_WIDTH ||
  EXPIRE_WIDTH !== TIME_WIDTH ||
  RESULT_REF_WIDTH !== 1 ||
  RESULT_REF_AT < EXPIRE_AT + TIME_WIDTH
) {
  throw new Error('untouched-complete.ts: the record header moved; update succeededRecord');
}

/**
 * The record `written` (a RUNNING record as the fast acquire wrote it) once completed at `now`, kept until
 * `expireAt`: what `encodeRecord` gives for transitions.ts `complete`'s meta (status, updatedAt, expireAt
 * and the result flag change; everything else stays byte for byte), patched by position like the complete
 * script's hot path instead of encoded anew.
 */
export function succeededRecord(written: string, now: number, expireAt: number): string {
  return (
    'S' +
    digits(now, TIME_WIDTH) +
    digits(expireAt, TIME_WIDTH) +
    written.slice(EXPIRE_AT + TIME_WIDTH, RESULT_REF_AT) +
    '1' +
    written.slice(RESULT_REF_AT + 1)
  );
}

export function createUntouchedComplete({ compareAndSet, serverClock, testClock, sent, mark }: UntouchedCompleteDeps): UntouchedComplete {
  const nowOf = (key: string) => recordNow(testClock, serverClock, key);
  /** The SUCCEEDED record of `written` completed at `now`, and the value that stores it with `result`. */
  const completedAt = (written: UntouchedRecord, fence: Fence, result: StoredResult, resultTtlMs: number, now: number) => {
    const { reply, next } = transitions.complete({ meta: written.meta }, fence, { result, resultTtlMs }, now);
    if (!next || !reply.ok || next.meta.expireAt > MAX_RECORD_TIME) return undefined;
    const header = succeededRecord(written.record, next.meta.updatedAt, next.meta.expireAt);
    return { reply, value: typeof result === 'string' ? header + result : Buffer.concat([Buffer.from(header), result]) };
  };
  /**
   * After a conditional write that wrote `value` but whose reply came back late (it may have waited that
   * long before it ran), the same result stamped anew, conditional on `value` (anything else there by now
   * is newer: it stays), until a reply comes back in time.
   */
  const restamp = async (
    key: string,
    value: string | Buffer,
    sentAt: number,
    again: (now: number) => string | Buffer | undefined,
    resultTtlMs: number,
  ) => {
    for (let restamps = 0; restamps < MAX_RESTAMPS && mark() - sentAt > SAMPLE_MAX_ROUND_TRIP_MS; restamps++) {
      const now = nowOf(key);
      const next = now === undefined ? undefined : again(now);
      if (next === undefined) break;
      sentAt = mark();
      // The result is stored already: a restamp that fails (a lost connection) leaves it as it is.
      if (!(await compareAndSet(key, next, resultTtlMs, value).catch(() => false))) break;
      value = next;
    }
  };
  return {
    attempt(fence, keys, result, resultTtlMs) {
      const written = keys.untouched;
      keys.untouched = undefined; // whatever happens next, the record is no longer the one written
      if (!written || !transitions.fenceMatches(written.meta, fence)) return undefined;
      const now = nowOf(keys.meta);
      if (now === undefined) return undefined;
      // The estimate may trail the server: near the lease's end the script decides on the server clock.
      if (now + (testClock ? 0 : FAST_ACQUIRE_EXPIRY_MARGIN_MS) >= written.meta.expireAt) return undefined;
      // The SET lands before the lease ends (or not at all): its result must still be alive then.
      if (now + resultTtlMs < written.meta.expireAt) return undefined;
      const completed = completedAt(written, fence, result, resultTtlMs, now);
      if (!completed) return undefined;
      const sentAt = mark();
      // One promise chain in the common case (a reply in time); the restamp's loop only after a late one.
      const command = compareAndSet(keys.meta, completed.value, resultTtlMs, written.record).then((set) => {
        if (!set) return undefined;
        if (mark() - sentAt <= SAMPLE_MAX_ROUND_TRIP_MS) return completed.reply;
        const again = (later: number) => completedAt(written, fence, result, resultTtlMs, later)?.value;
        return restamp(keys.meta, completed.value, sentAt, again, resultTtlMs).then(() => completed.reply);
      });
      return sent('complete', fence, command);
    },
  };
}
