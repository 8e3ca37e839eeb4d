/**
 * The node-local L1 replay cache: results of recently completed
 * flights, so repeated calls skip Redis. Keys are full flight ids. Values are deep-frozen by the caller
 * (`SingleFlight`): the cache hands the same value to every hit and never copies it. It also holds the node's
 * stale copies (local mode, hybrid) under keys of their own, so one bound holds every copy the node keeps:
 * `get` must hand back the very entry object `set` was given.
 */
/** A cached result: its value, and the epoch of the run that produced it (a hit reports it, as a replay does). */
export interface ReplayEntry {
  readonly value: unknown;
  /** Undefined for a run without a lease (local mode, hybrid fallback). */
  readonly epoch?: number | undefined;
}

export interface ReplayCache {
  /** Returns the cached entry, or `undefined` when absent or expired. */
  get(key: string): ReplayEntry | undefined;
  /**
   * Stores an entry for `ttlMs`. `sizeBytes` is the value's size (its encoded length, or an estimate) for
   * caches bounded by bytes; a value larger than the cache's bound is not stored.
   */
  set(key: string, entry: ReplayEntry, ttlMs: number, sizeBytes?: number): void;
  delete(key: string): void;
  clear(): void;
}
