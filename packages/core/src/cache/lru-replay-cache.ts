import { LRUCache } from 'lru-cache';
import type { ReplayCache, ReplayEntry } from '../ports/replay-cache.js';

export interface LruReplayCacheOptions {
  /** Most entries kept; the least recently used go first. @default 10000 */
  maxEntries?: number;
  /**
   * Most bytes kept, counted by the size `SingleFlight` gives each entry (the encoded length of a shared
   * result, an estimate for a value that never left the process); a larger single entry is not cached.
   * @default 67108864 (64 MiB)
   */
  maxBytes?: number;
}

/** Default of `maxBytes`. */
export const DEFAULT_L1_MAX_BYTES = 64 * 1024 * 1024;

/** The default L1 replay cache, on `lru-cache`: bounded by entries and by bytes, a TTL per entry. */
export function createLruReplayCache(options: LruReplayCacheOptions = {}): ReplayCache {
  const cache = new LRUCache<string, ReplayEntry>({
    max: options.maxEntries ?? 10_000,
    maxSize: options.maxBytes ?? DEFAULT_L1_MAX_BYTES,
    ttlAutopurge: false,
  });
  return {
    get: (key) => cache.get(key),
    set: (key, entry, ttlMs, sizeBytes) => {
      cache.set(key, entry, { ttl: ttlMs, size: Math.max(1, Math.ceil(sizeBytes ?? 1)) });
    },
    delete: (key) => {
      cache.delete(key);
    },
    clear: () => cache.clear(),
  };
}
