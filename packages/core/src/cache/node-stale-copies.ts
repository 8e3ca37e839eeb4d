/**
 * Stale copies kept on this node (local mode, and hybrid mode while it serves in-process): the values this
 * node's runs produced, kept past their fresh time while one of their stale windows lasts, with when a
 * refresh of them may run again. The same rules as the coordinator's `StaleCopy` (transitions.ts), per node.
 */
import { LRUCache } from 'lru-cache';
import type { StaleWindows } from '../state/types.js';

export interface NodeStaleCopy {
  /** The deep-frozen value. */
  value: unknown;
  storedAt: number;
  /** Until then the value is fresh: served only as L1 serves it, never as stale. */
  freshUntil: number;
  revalidateUntil: number;
  errorUntil: number;
  /** No refresh starts before this (a refresh failed; the stage's `stale.retryAfterMs`). */
  retryAt: number;
}

/** Most copies kept per node; the least recently used go first. */
const MAX_COPIES = 10_000;

export class NodeStaleCopies {
  private readonly copies = new LRUCache<string, NodeStaleCopy>({ max: MAX_COPIES, ttlAutopurge: false });

  /** Keeps `value` of flight `id`, fresh for `freshMs` from `now`, with `windows` (both 0: drops the copy). */
  keep(id: string, value: unknown, freshMs: number, windows: StaleWindows, now: number): void {
    const freshUntil = now + freshMs;
    const revalidateUntil = freshUntil + windows.whileRevalidateMs;
    const errorUntil = freshUntil + windows.ifErrorMs;
    const ttl = Math.max(revalidateUntil, errorUntil) - now;
    if (windows.whileRevalidateMs <= 0 && windows.ifErrorMs <= 0) this.copies.delete(id);
    else this.copies.set(id, { value, storedAt: now, freshUntil, revalidateUntil, errorUntil, retryAt: 0 }, { ttl });
  }

  /** The copy of `id` while it is stale at `now` and one of its windows lasts. */
  get(id: string, now: number): NodeStaleCopy | undefined {
    const copy = this.copies.get(id);
    return copy && copy.freshUntil <= now && Math.max(copy.revalidateUntil, copy.errorUntil) > now ? copy : undefined;
  }

  drop(id: string): void {
    this.copies.delete(id);
  }
}
