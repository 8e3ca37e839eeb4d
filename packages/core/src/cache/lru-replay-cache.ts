import { LRUCache } from 'lru-cache';
import type { ReplayCache } from '../ports/replay-cache.js';

export interface LruReplayCacheOptions {
  /** Most entries kept; the least recently used go first. @default 10000 */
  maxEntries?: number;
}

/** The default L1 replay cache, on `lru-cache`: bounded entries, a TTL per entry. */
export function createLruReplayCache(options: LruReplayCacheOptions = {}): ReplayCache {
  const cache = new LRUCache<string, { value: unknown }>({ max: options.maxEntries ?? 10_000, ttlAutopurge: false });
  return {
    get: (key) => cache.get(key),
    set: (key, value, ttlMs) => {
      cache.set(key, { value }, { ttl: ttlMs });
    },
    delete: (key) => {
      cache.delete(key);
    },
    clear: () => cache.clear(),
  };
}
