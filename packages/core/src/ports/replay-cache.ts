/**
 * The node-local L1 replay cache (the seed's `FlightReplayLocalCache`): decoded results of
 * recently completed flights, so repeated calls skip Redis. Keys are full flight ids.
 */
export interface ReplayCache {
  /** Returns the cached value, or `undefined` when absent or expired. */
  get(key: string): { value: unknown } | undefined;
  /** Stores a value for `ttlMs`. */
  set(key: string, value: unknown, ttlMs: number): void;
  delete(key: string): void;
  clear(): void;
}
