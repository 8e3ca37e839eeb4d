/**
 * Cluster-wide forgets for a node's copies (with a coordinator that has `listenForgets`): a node keeps a copy of a
 * flight only while it listens for that flight's forgets, and only of a value read after its listening was
 * confirmed — so a forget made on any node, even one racing the read, always wins over the copy. While the
 * node cannot hear (its connection broke), it keeps no L1 copy of the flights it listens on (`NodeCopies`
 * decides what else to drop).
 *
 * Listening costs a subscription per flight. A flight read once on this node (most distinct keys) costs
 * nothing: its first read only notes it, its second starts listening, and reads after the confirmation
 * fill L1. A listening ends with the last copy's TTL; at most `maxFlights` are kept (the oldest go first,
 * their copies with them).
 */
import type { ForgetListener } from '../ports/coordinator.js';
import type { FlightRef } from '../state/types.js';
import type { ForgetMarks } from './forget-marks.js';

interface Watch {
  stop: () => void;
  /** The mark when forgets became heard (`ForgetMarks.next`); undefined while they may be missed. */
  coveredAt: number | undefined;
  /** Until when (local clock) a copy may live: the listening can end then. */
  until: number;
}

export interface L1WatchDeps {
  listen(ref: FlightRef, listener: ForgetListener): () => void;
  marks: ForgetMarks;
  now(): number;
  /** A forget of `id` was heard: forget it on this node. */
  forgotten(id: string, ref: FlightRef): void;
  /** Forgets of `id` may be missed from now on (the connection broke): drop the copies that must not outlive that. */
  unheard(id: string): void;
  /** The listening on `id` ended (its copies' time is over, or it made room for others): drop every copy. */
  ended(id: string): void;
}

export class L1Watches {
  /** Flights read once here, not listened to yet (oldest first). */
  private readonly readOnce = new Set<string>();
  /** Flights listened to, oldest fill first. */
  private readonly watches = new Map<string, Watch>();

  constructor(
    private readonly deps: L1WatchDeps,
    private readonly maxFlights = 10_000,
  ) {}

  /**
   * Whether a value of `ref` (flight id `id`) read by a call that started at mark `since` may be kept for
   * `ttlMs`: the mark since which the listening hears every forget of the flight when it may, else
   * undefined. Starts listening on the flight's second read.
   */
  mayFill(id: string, ref: FlightRef, since: number, ttlMs: number): number | undefined {
    const now = this.deps.now();
    this.sweep(now);
    const watch = this.watches.get(id);
    if (watch) {
      watch.until = Math.max(watch.until, now + ttlMs);
      this.watches.delete(id);
      this.watches.set(id, watch);
      return watch.coveredAt !== undefined && since >= watch.coveredAt ? watch.coveredAt : undefined;
    }
    if (!this.readOnce.delete(id)) {
      this.readOnce.add(id);
      if (this.readOnce.size > this.maxFlights) this.readOnce.delete(this.readOnce.values().next().value as string);
      return undefined;
    }
    this.start(id, ref, now + ttlMs);
    return undefined;
  }

  /** The mark since which every forget of `id` is heard; undefined while none may be (or nobody listens). */
  coveredAt(id: string): number | undefined {
    return this.watches.get(id)?.coveredAt;
  }

  /** Stops every listening (the single-flight closes). */
  close(): void {
    for (const id of [...this.watches.keys()]) this.end(id);
    this.readOnce.clear();
  }

  private start(id: string, ref: FlightRef, until: number): void {
    const { deps } = this;
    const watch: Watch = { stop: () => undefined, coveredAt: undefined, until };
    this.watches.set(id, watch);
    watch.stop = deps.listen(ref, {
      forgotten: () => deps.forgotten(id, ref),
      covered: (heard) => {
        if (this.watches.get(id) !== watch) return;
        if (heard) watch.coveredAt ??= deps.marks.next();
        else {
          watch.coveredAt = undefined;
          deps.unheard(id);
        }
      },
    });
    if (this.watches.size > this.maxFlights) this.end(this.watches.keys().next().value as string);
  }

  /** Ends the listenings whose copies have all expired (the oldest fills come first). */
  private sweep(now: number): void {
    for (const [id, watch] of this.watches) {
      if (watch.until > now) return;
      this.end(id);
    }
  }

  private end(id: string): void {
    const watch = this.watches.get(id);
    if (!watch) return;
    this.watches.delete(id);
    watch.stop();
    this.deps.ended(id);
  }
}
