/**
 * The node-local L1 replay cache: results of recently completed
 * flights, so repeated calls skip Redis. Keys are full flight ids. Values are deep-frozen by the caller
 * (`SingleFlight`): the cache hands the same value to every hit and never copies it.
 */
export interface ReplayCache {
  /** Returns the cached value, or `undefined` when absent or expired. */
  get(key: string): { value: unknown } | undefined;
  /**
   * Stores a value for `ttlMs`. `sizeBytes` is the value's size (its encoded length, or an estimate) for
   * caches bounded by bytes; a value larger than the cache's bound is not stored.
   */
  set(key: string, value: unknown, ttlMs: number, sizeBytes?: number): void;
  delete(key: string): void;
  clear(): void;
}
