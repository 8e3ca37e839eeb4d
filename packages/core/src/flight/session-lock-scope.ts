/**
 * Holding a session lock around a piece of work: take it (falling back to the in-process lock in hybrid
 * mode when the shared one is unreachable), renew it every third of its TTL while the work runs, release
 * it afterwards — or as soon as the run is abandoned (deadline, lost lease, cancel), even when the work
 * ignores its signal and never settles. Renewal and release failures are logged, never thrown from a timer.
 */
import { isCoordinationFailure } from '../errors.js';
import type { Clock, TimerHandle } from '../ports/clock.js';
import type { FlightLogger } from '../ports/logger.js';
import type { SessionLock, SessionLockHandle } from '../ports/session-lock.js';
import type { RunScope } from '../run/run-scope.js';

export interface SessionLockScope {
  lock: SessionLock;
  /** Used instead of `lock` when it fails with a coordination error (hybrid mode), else undefined. */
  fallback: SessionLock | undefined;
  clock: Clock;
  logger: FlightLogger;
}

export async function withSessionLock<T>(
  scope: SessionLockScope,
  sessionId: string,
  terms: { ttlMs: number; waitMs: number },
  run: RunScope,
  fn: () => Promise<T>,
): Promise<T> {
  const { clock, logger } = scope;
  const signal = run.signal;
  let handle: SessionLockHandle;
  try {
    handle = await scope.lock.acquire(sessionId, { ...terms, signal });
  } catch (error) {
    if (!scope.fallback || !isCoordinationFailure(error)) throw error;
    handle = await scope.fallback.acquire(sessionId, { ...terms, signal });
  }
  let held = true;
  let timer: TimerHandle | undefined;
  const scheduleRenewal = () => {
    timer = clock.setTimeout(
      () => {
        if (!held) return;
        handle.renew(terms.ttlMs).then(
          () => held && scheduleRenewal(),
          (error) => logger.warn({ err: error, sessionId }, 'session lock renewal failed'),
        );
      },
      Math.max(100, Math.floor(terms.ttlMs / 3)),
    );
  };
  scheduleRenewal();
  try {
    if (run.aborted) throw run.reason;
    return await run.race(fn());
  } finally {
    held = false;
    clock.clearTimeout(timer);
    handle.release().catch((error) => logger.warn({ err: error, sessionId }, 'session lock release failed'));
  }
}
