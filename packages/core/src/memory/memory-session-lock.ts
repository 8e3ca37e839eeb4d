import { randomUUID } from 'node:crypto';
import { FlightLockLostError, FlightLockTimeoutError, FlightValidationError } from '../errors.js';
import { sleep, systemClock, type Clock } from '../ports/clock.js';
import type { SessionLock, SessionLockHandle } from '../ports/session-lock.js';

/** How often a waiting acquirer re-tries. */
const RETRY_MS = 10;

/** The in-process session lock: token-checked, with a TTL, same contract as the Redis one. */
export function createMemorySessionLock(options: { clock?: Clock } = {}): SessionLock {
  const clock = options.clock ?? systemClock;
  const held = new Map<string, { token: string; expiresAt: number }>();

  const holds = (sessionId: string, token: string) => {
    const entry = held.get(sessionId);
    return !!entry && entry.token === token && entry.expiresAt > clock.now();
  };

  return {
    async acquire(sessionId, { ttlMs, waitMs, signal }) {
      if (typeof sessionId !== 'string' || sessionId.length === 0) throw new FlightValidationError('sessionId must be a non-empty string');
      const token = randomUUID();
      const giveUpAt = clock.now() + waitMs;
      for (;;) {
        const entry = held.get(sessionId);
        if (!entry || entry.expiresAt <= clock.now()) {
          held.set(sessionId, { token, expiresAt: clock.now() + ttlMs });
          const handle: SessionLockHandle = {
            sessionId,
            token,
            async renew(extendMs = ttlMs) {
              if (!holds(sessionId, token)) throw new FlightLockLostError(`session lock of ${sessionId} is no longer held`);
              held.set(sessionId, { token, expiresAt: clock.now() + extendMs });
            },
            async release() {
              if (!holds(sessionId, token)) return false;
              held.delete(sessionId);
              return true;
            },
          };
          return handle;
        }
        if (clock.now() >= giveUpAt || signal?.aborted) {
          throw new FlightLockTimeoutError(`session lock of ${sessionId} is held by someone else`, { context: { sessionId } });
        }
        await sleep(clock, Math.min(RETRY_MS, Math.max(1, giveUpAt - clock.now())), signal);
      }
    },
  };
}
