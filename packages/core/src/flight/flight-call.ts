/**
 * One call's run: what it runs (supplier, policy, options), its trace note, and the state of its acquire
 * loop (the epoch it follows, when it started waiting, its ownership attempts). One object per call.
 */
import type { FlightRole } from '../events/types.js';
import type { StagePolicy } from '../policy/stage-policy.js';
import type { CopyTaker, HeldOffer } from '../cache/node-copies.js';
import type { StaleWindows } from '../state/types.js';
import type { TraceNote } from '../telemetry/flight-telemetry.js';
import type { ExecuteOptions, StreamExecuteOptions, Supplier } from './types.js';

/** What a run returns to `SingleFlight.execute` (and to the callers that joined it on this node). */
export interface Outcome {
  value: unknown;
  role: FlightRole;
  epoch?: number | undefined;
  /** The run's trace note (telemetry on), read by the callers that joined the run on this node. */
  trace?: TraceNote | undefined;
  /** For a `stale` value: how long ago it was stored, ms. */
  ageMs?: number | undefined;
}

export class FlightCall implements CopyTaker {
  /** The flight's reference (a plain type, so it also serves as an error's context). */
  readonly ref: { stage: string; key: string };
  /** The epoch this call follows (or followed before its acquire was asked again); undefined at first. */
  joinEpoch: number | undefined = undefined;
  /** When this call started waiting as a follower; undefined while it never waited. */
  waitStartedAt: number | undefined = undefined;
  /** What woke the last wait. */
  woken: 'event' | 'poll' = 'poll';
  /** When this call's latest acquire was sent (this node's clock): a lease it gave dates from then at the latest. */
  acquireSentAt: number | undefined = undefined;
  /** How many times this call was given the lease. */
  ownerAttempts = 0;
  /** Why the last owner attempt gave up (a fenced write). */
  lastError: Error | undefined = undefined;
  /** The latest stale copy offered to this call (calls that accept stale values only). */
  offer: HeldOffer | undefined = undefined;
  /**
   * This call's owner run refreshes a stale copy that may stand in for its failure: a failure is then kept
   * (not retryable) for the stage's `stale.retryAfterMs`, so the cluster tries one refresh per interval.
   */
  refreshing = false;

  constructor(
    stage: string,
    key: string,
    readonly supplier: Supplier<unknown>,
    readonly policy: StagePolicy,
    readonly options: ExecuteOptions,
    /** The call's trace note (telemetry on), else undefined. */
    readonly note: TraceNote | undefined,
    /** The forget mark when the call started (`NodeCopies.since`): what it reads is kept only if no forget came since. */
    readonly since: number,
    /** The call runs for nobody in particular (a refresh detached from its callers). */
    readonly detachedRun = false,
  ) {
    this.ref = { stage, key };
    this.maxResultBytes = (options as StreamExecuteOptions).maxResultBytes ?? policy.maxResultBytes;
    this.keepsStale = policy.stale.enabled || options.staleFor !== undefined;
    this.acceptsStale = this.keepsStale && options.fresh !== true;
  }

  /** The call's run keeps its value as a stale copy (the stage has `stale` windows, or the call `staleFor`). */
  readonly keepsStale: boolean;
  /** The call may be given a stale value (it keeps stale copies and did not ask for `fresh`). */
  readonly acceptsStale: boolean;

  /**
   * The stale windows of `value` when the run stores it (`complete`), or undefined for a call that keeps no
   * stale copies. A `staleFor` that throws or returns no numbers gives 0 (the copy is dropped).
   */
  staleWindows(value: unknown): StaleWindows | undefined {
    if (!this.keepsStale) return undefined;
    const { whileRevalidateMs, ifErrorMs } = this.policy.stale;
    const option = this.options.staleFor;
    if (!option) return { whileRevalidateMs, ifErrorMs };
    let windows: ReturnType<typeof option>;
    try {
      windows = option(value);
    } catch {
      return { whileRevalidateMs: 0, ifErrorMs: 0 };
    }
    if (windows === undefined) return { whileRevalidateMs, ifErrorMs };
    return { whileRevalidateMs: wholeMs(windows.whileRevalidateMs), ifErrorMs: wholeMs(windows.ifErrorMs) };
  }

  /**
   * This call's run for nobody in particular (a refresh of a stale value, detached from its callers): the same
   * supplier, policy and options, less the caller's signal and `cancelWhenAbandoned`, without a trace note.
   */
  detached(): FlightCall {
    const { signal: _signal, cancelWhenAbandoned: _cancel, ...options } = this.options;
    return new FlightCall(this.ref.stage, this.ref.key, this.supplier, this.policy, options, undefined, this.since, true);
  }

  /** The cap of the flight's stored result (encoded and decoded), in bytes. */
  readonly maxResultBytes: number;

  /**
   * How long, from now, later callers may reuse `value` (ms, 1 to the stage's `resultTtlMs`): the stage's
   * `resultTtlMs`, or less when this call's `resultTtlMs` option says so (see `ExecuteOptions`).
   */
  reuseFor(value: unknown): number {
    const limit = this.policy.resultTtlMs;
    const option = this.options.resultTtlMs;
    if (option === undefined) return limit;
    let ms: number | undefined;
    try {
      ms = typeof option === 'number' ? option : option(value);
    } catch {
      return 1;
    }
    if (ms === undefined) return limit;
    return typeof ms === 'number' && !Number.isNaN(ms) ? Math.min(limit, Math.max(1, Math.floor(ms))) : 1;
  }
}

/** A window as whole milliseconds; anything but a positive number is 0. */
const wholeMs = (ms: unknown): number => (typeof ms === 'number' && ms > 0 && Number.isFinite(ms) ? Math.floor(ms) : 0);

/** Records in the trace note who did the work for this call (no-op with telemetry off). */
export function noteWork(
  note: TraceNote | undefined,
  role: FlightRole,
  epoch: number | undefined,
  ownerTraceparent: string | undefined,
  waitedMs?: number,
) {
  if (!note) return;
  note.role = role;
  note.epoch = epoch;
  note.ownerTraceparent = ownerTraceparent;
  note.waitedMs = waitedMs;
}
