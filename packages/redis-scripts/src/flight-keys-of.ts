/**
 * The keys and notice channel of a flight, derived from its ref (a SHA-256 of stage and key: see keys.ts)
 * once per call. The derived keys ride with the acquire reply as its `handle` (core's `AcquireReply.handle`),
 * and core hands them back with the owner's writes of that run (`Fence.handle`) and with the follower's
 * wait, so an owner's acquire and complete hash the ref once, and no table of recent flights' keys outlives
 * them (the runs a follower joined are remembered apart: followed-runs.ts).
 */
import type { FlightMeta, FlightRef } from '@flight/core/adapter';
import { flightKeys, noticeChannel, type FlightKeys } from './keys';

/** The record of a run as the fast acquire wrote it, and the meta it encodes (see `RunKeys.untouched`). */
export interface UntouchedRecord {
  readonly record: string;
  readonly meta: FlightMeta;
}

/** A ref with, possibly, the handle core gave back (see `AcquireReply.handle`). */
export type HandledRef = FlightRef & { handle?: unknown };

/** The keys of one flight as one coordinator derived them; the `handle` of its acquire replies. */
export class RunKeys implements FlightKeys {
  /**
   * The run's record as this coordinator's fast acquire created it, while no owner write of the run has
   * been sent since (fast-paths/untouched-complete.ts); undefined otherwise.
   */
  untouched: UntouchedRecord | undefined = undefined;

  constructor(
    /** The coordinator's derivation that made these keys (a handle of another coordinator is not taken). */
    readonly source: object,
    readonly stage: string,
    readonly key: string,
    readonly tag: string,
    readonly meta: string,
    readonly list: readonly [string],
    readonly channel: string,
    readonly stale: string,
    readonly withStale: readonly [string, string],
  ) {}
}

/** The derivation of one coordinator: a ref's keys, taken from its handle when it carries this one's. */
export function createFlightKeysOf(prefix: string, db: number): (ref: HandledRef, handle?: unknown) => RunKeys {
  const source = {};
  return function keysOf(ref, handle = ref.handle) {
    if (handle instanceof RunKeys && handle.source === source && handle.stage === ref.stage && handle.key === ref.key) return handle;
    const { tag, meta, list, stale, withStale } = flightKeys(prefix, ref);
    return new RunKeys(source, ref.stage, ref.key, tag, meta, list, noticeChannel(prefix, tag, db), stale, withStale);
  };
}
