/** The keys and notice channel of recent flights, so an owner's acquire and complete hash its ref once. */
import { flightId, type FlightRef } from '@flight/core';
import { flightKeys, noticeChannel, type FlightKeys } from './keys';

/** Flights whose keys are remembered per generation (a digest each). */
const KEY_CACHE_SIZE = 4096;

export interface CachedKeys extends FlightKeys {
  channel: string;
  /** The run this process last followed on the flight (from a FOLLOWER_WAIT reply): its notices carry its nonce. */
  followed?: { epoch: number; nonce: string } | undefined;
}

/**
 * Two generations of at most KEY_CACHE_SIZE each: when the newer fills up it becomes the older and the
 * older is dropped whole (evicting one oldest entry at a time from a Map walks over the holes earlier
 * deletions left).
 */
export function createKeyCache(prefix: string, db: number): (ref: FlightRef) => CachedKeys {
  let recentKeys = new Map<string, CachedKeys>();
  let olderKeys = new Map<string, CachedKeys>();
  return function keysOf(ref) {
    const id = flightId(ref);
    let keys = recentKeys.get(id);
    if (keys) return keys;
    keys = olderKeys.get(id);
    if (!keys) {
      const { tag, meta, list } = flightKeys(prefix, ref);
      keys = { tag, meta, list, channel: noticeChannel(prefix, tag, db), followed: undefined };
    }
    if (recentKeys.size >= KEY_CACHE_SIZE) {
      olderKeys = recentKeys;
      recentKeys = new Map();
    }
    recentKeys.set(id, keys);
    return keys;
  };
}
