/**
 * Every copy of a flight's value this node holds, in one place: L1 entries, the node's stale copies (local
 * mode, hybrid while it serves in-process), the stale value offered while a caller of this node runs a
 * refresh itself, and the logs of streamed runs its callers read. Each fill and each read passes through here, and the same rules hold for all of them:
 *
 * - **forget**: a copy taken by a call that started before the latest forget of its flight (made here or
 *   heard from another node) is never filled nor handed out (`ForgetMarks`); a forget drops every copy;
 * - **heard forgets**: with a coordinator that has `listenForgets`, a node keeps a copy only while it hears
 *   that flight's forgets (`L1Watches`): nothing made while cut off from Redis is kept;
 * - **age**: an L1 entry lives no longer than the stored result it copies and the call's `resultTtlMs`;
 *   a stale copy no longer than its windows, its age counted from the run's completion;
 * - **bytes**: L1 entries and stale copies share one cache (the `replayCache`), so one byte budget and one
 *   LRU hold them all, by the size estimate every fill gives;
 * - **run identity**: every copy carries the epoch of the run that made it (none for a run without a lease).
 */
import type { Clock } from '../ports/clock.js';
import type { ForgetListener } from '../ports/coordinator.js';
import type { ReplayCache, ReplayEntry } from '../ports/replay-cache.js';
import type { FlightRef, StaleOffer, StaleWindows } from '../state/types.js';
import { StreamHub } from '../stream/stream-log.js';
import { ForgetMarks } from './forget-marks.js';
import { L1Watches } from './l1-watches.js';

/** A stale copy kept on this node: served past its fresh time while one of its windows lasts. */
export interface NodeStaleCopy extends ReplayEntry {
  /** When the run that made it completed (this node's clock): `ageMs` counts from here. */
  readonly storedAt: number;
  /** Until then the value is fresh: served only as L1 serves it, never as stale. */
  readonly freshUntil: number;
  readonly revalidateUntil: number;
  readonly errorUntil: number;
  /** No refresh starts before this (a refresh failed; the stage's `stale.retryAfterMs`). */
  retryAt: number;
  /** The forget mark of the call that made it. */
  readonly since: number;
  /** The listening's mark when the copy was kept (hybrid with heard forgets); undefined otherwise. */
  readonly coveredAt: number | undefined;
}

/** A stale value handed to a call: the coordinator's offer (encoded) or this node's copy (`value`). */
export interface HeldOffer {
  offer: StaleOffer;
  /** When (this node's clock) the offer came. */
  at: number;
  /** A copy this node kept: its value itself, not an encoded result; no epoch. */
  value?: unknown;
  /** The forget mark of the call that took it: the offer is never handed out after a later forget. */
  since: number;
}

/** What a call is to the copies it fills and reads. */
export interface CopyTaker {
  readonly ref: FlightRef;
  /** The forget mark when the call started. */
  readonly since: number;
  /** The stale value this call holds (a refresh it runs itself hands it to others). */
  offer: HeldOffer | undefined;
}

/** What a fill keeps: an L1 entry, a stale copy, or both. */
export interface Fill {
  entry: ReplayEntry;
  /** What the value holds in memory, bytes (the larger of its encoded length and its in-memory estimate). */
  sizeBytes: number;
  /** How long the L1 entry may live, ms; 0 or less: no L1 entry. */
  l1TtlMs: number;
  /** The stale copy to keep: fresh for `freshMs`, then its `windows`; undefined: none. */
  stale?: { freshMs: number; windows: StaleWindows } | undefined;
}

export interface NodeCopiesDeps {
  /** Where L1 entries and stale copies live (one LRU, one byte budget). */
  cache: ReplayCache;
  clock: Clock;
  /** The coordinator's `listenForgets`, where forgets of other nodes can be heard (not in `local` mode). */
  listen?: ((ref: FlightRef, listener: ForgetListener) => () => void) | undefined;
  /** A forget of `id` made on another node was heard. */
  heard(id: string, ref: FlightRef): void;
}

/** The cache key of a flight's stale copy (beside its L1 entry, which is keyed by the flight id). */
const staleKey = (id: string) => `${id}\u0000stale`;

export class NodeCopies {
  /** Forgets seen on this node: what a call started before one may no longer fill or be handed. */
  readonly marks = new ForgetMarks();
  /** Copies of distributed runs are kept only while their flights' forgets are heard. */
  readonly watches: L1Watches | undefined;
  /** The chunks of the streamed runs this node's callers read (one log per flight, while read). */
  readonly streams: StreamHub;
  /** Calls of this node running the refresh of a stale value themselves, by flight id. */
  private readonly refreshing = new Map<string, CopyTaker>();
  /** Calls of this node waiting, joined to another's run, for that run to turn out a refresh run by its caller. */
  private readonly refreshWaiters = new Map<string, Set<() => void>>();

  constructor(private readonly deps: NodeCopiesDeps) {
    const { listen, cache } = deps;
    this.streams = new StreamHub(() => deps.clock.now());
    this.watches = listen
      ? new L1Watches({
          listen,
          marks: this.marks,
          now: () => deps.clock.now(),
          forgotten: (id, ref) => deps.heard(id, ref),
          // L1 copies go at once; a stale copy stays for an outage and is dropped when forgets are heard again.
          unheard: (id) => cache.delete(id),
          ended: (id) => this.drop(id),
        })
      : undefined;
  }

  /** The mark a call takes when it starts. */
  since(): number {
    return this.marks.now();
  }

  /** True while no forget of `id` came after a call that started at `since`. */
  current(id: string, since: number): boolean {
    return this.marks.mayFill(id, since);
  }

  /** The L1 entry of `id`. */
  replay(id: string): ReplayEntry | undefined {
    return this.deps.cache.get(id);
  }

  /**
   * Keeps what `taker`'s run or read produced, when no forget of the flight came since the call started
   * and, where forgets of other nodes can be heard (`listenForgets`), only while this node hears them — so
   * a hybrid node keeps nothing it makes while cut off from Redis. `local`: the value comes from a run of
   * this node without a lease; where no forget can be heard (local mode), only such a run's value is kept
   * as a stale copy.
   */
  fill(id: string, taker: CopyTaker, fill: Fill, local: boolean): void {
    const { cache } = this.deps;
    const { stale } = fill;
    const l1TtlMs = fill.l1TtlMs >= 1 ? fill.l1TtlMs : 0;
    const staleTtlMs = stale ? stale.freshMs + Math.max(stale.windows.whileRevalidateMs, stale.windows.ifErrorMs) : 0;
    const keepsStale = stale !== undefined && staleTtlMs > stale.freshMs && (local || this.watches !== undefined);
    const wanted = (l1TtlMs > 0 || keepsStale) && this.current(id, taker.since);
    // Where forgets of other nodes can be heard, a copy is kept only under a listening that hears them now.
    const coveredAt = wanted && this.watches ? this.watches.mayFill(id, taker.ref, taker.since, Math.max(l1TtlMs, staleTtlMs)) : undefined;
    const kept = wanted && (!this.watches || coveredAt !== undefined);
    if (kept && l1TtlMs > 0) cache.set(id, fill.entry, l1TtlMs, fill.sizeBytes);
    if (!stale) return;
    // A run's value that is not kept as a stale copy still replaces the copy of the value before it.
    if (!kept || !keepsStale) {
      cache.delete(staleKey(id));
      return;
    }
    const now = this.deps.clock.now();
    const freshUntil = now + stale.freshMs;
    const copy: NodeStaleCopy = {
      value: fill.entry.value,
      epoch: fill.entry.epoch,
      storedAt: now,
      freshUntil,
      revalidateUntil: freshUntil + stale.windows.whileRevalidateMs,
      errorUntil: freshUntil + stale.windows.ifErrorMs,
      retryAt: 0,
      since: taker.since,
      coveredAt,
    };
    cache.set(staleKey(id), copy, staleTtlMs, fill.sizeBytes);
  }

  /** This node's stale copy of `id`, while it is stale at `now`, one of its windows lasts and no forget dropped it. */
  staleCopy(id: string, now: number): NodeStaleCopy | undefined {
    const copy = this.deps.cache.get(staleKey(id)) as NodeStaleCopy | undefined;
    if (!copy || copy.freshUntil > now || Math.max(copy.revalidateUntil, copy.errorUntil) <= now) return undefined;
    if (!this.current(id, copy.since) || !this.stillHeard(id, copy)) {
      this.deps.cache.delete(staleKey(id));
      return undefined;
    }
    return copy;
  }

  /**
   * A copy kept under a listening is served while that listening still hears every forget, or while it hears
   * nothing (an outage: no forget can be heard, the copy is what the node has); never once forgets are heard
   * again after a break, when one may have been missed.
   */
  private stillHeard(id: string, copy: NodeStaleCopy): boolean {
    if (copy.coveredAt === undefined || !this.watches) return true;
    const coveredAt = this.watches.coveredAt(id);
    return coveredAt === undefined || coveredAt === copy.coveredAt;
  }

  /** `taker` of this node runs the refresh of `id` itself: others may get its stale value meanwhile. */
  refreshStarted(id: string, taker: CopyTaker): void {
    this.refreshing.set(id, taker);
    const waiters = this.refreshWaiters.get(id);
    if (!waiters) return;
    this.refreshWaiters.delete(id);
    for (const waiter of waiters) waiter();
  }

  /** Calls `fn` once when a call of this node starts running the refresh of `id` itself; returns the function that stops waiting. */
  onRefresh(id: string, fn: () => void): () => void {
    let waiters = this.refreshWaiters.get(id);
    if (!waiters) this.refreshWaiters.set(id, (waiters = new Set()));
    waiters.add(fn);
    return () => {
      const now = this.refreshWaiters.get(id);
      if (!now?.delete(fn) || now.size > 0) return;
      this.refreshWaiters.delete(id);
    };
  }

  refreshEnded(id: string, taker: CopyTaker): void {
    if (this.refreshing.get(id) === taker) this.refreshing.delete(id);
  }

  /**
   * The stale value a call of this node refreshing `id` itself holds (whoever hands it out checks it is still
   * `current`: a forget drops the refresh from here too).
   */
  refreshOffer(id: string): HeldOffer | undefined {
    return this.refreshing.get(id)?.offer;
  }

  /**
   * Forgets `id` on this node: every copy of it, and any fill or offer taken by a call started before now;
   * callers of its streamed run read it to its end, callers that come later a log of their own.
   */
  forget(id: string): void {
    this.marks.forgot(id);
    this.drop(id);
    this.refreshing.delete(id);
    this.streams.forget(id);
  }

  /** Stops listening for forgets (the single-flight closes). */
  close(): void {
    this.watches?.close();
  }

  private drop(id: string): void {
    this.deps.cache.delete(id);
    this.deps.cache.delete(staleKey(id));
  }
}
