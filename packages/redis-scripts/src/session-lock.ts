/**
 * The Redis session lock (a per-session mutex for heavy stages), same port as core's in-memory
 * lock: `SET NX PX token` to take it, token-checked scripts to release and renew, polling to wait.
 */
import { randomUUID } from 'node:crypto';
import { FlightLockLostError, FlightLockTimeoutError, FlightValidationError } from '@flight/core';
import type { SessionLock, SessionLockHandle } from '@flight/core/adapter';
import type { RedisDriver } from './driver';
import { toFlightRedisError, withDeadline } from './errors';
import { lockKey } from './keys';
import type { LuaScriptName } from './spine/lua.generated';
import { DEFAULT_COMMAND_TIMEOUT_MS, DEFAULT_PREFIX } from './options';
import { runScript } from './spine/scripts';

export interface RedisSessionLockOptions {
  /** First segment of the lock keys. @default 'flight' */
  prefix?: string;
  /** Deadline of every Redis call. @default 2000 */
  commandTimeoutMs?: number;
  /** How often a waiting acquirer tries again. @default 25 */
  retryIntervalMs?: number;
}

/** A session lock that can release the connections it opened. */
export interface RedisSessionLock extends SessionLock {
  /** Closes what the lock's driver opened (not the user's own client). */
  close(): Promise<void>;
}

export function createRedisSessionLock(driver: RedisDriver, options: RedisSessionLockOptions = {}): RedisSessionLock {
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  const timeoutMs = options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
  const retryMs = Math.max(1, options.retryIntervalMs ?? 25);

  async function run(name: LuaScriptName, key: string, args: string[], sessionId: string): Promise<number> {
    try {
      return Number(await withDeadline(runScript(driver, name, [key], args), timeoutMs));
    } catch (error) {
      throw toFlightRedisError(error, name, { sessionId });
    }
  }

  return {
    close: () => driver.close(),
    async acquire(sessionId, { ttlMs, waitMs, signal }) {
      if (typeof sessionId !== 'string' || sessionId.length === 0) throw new FlightValidationError('sessionId must be a non-empty string');
      if (!Number.isFinite(ttlMs) || ttlMs < 1) throw new FlightValidationError(`ttlMs must be >= 1, got ${ttlMs}`);
      const key = lockKey(prefix, sessionId);
      const token = randomUUID();
      const giveUpAt = Date.now() + Math.max(0, waitMs);
      for (;;) {
        if ((await run('lockAcquire', key, [token, String(Math.trunc(ttlMs))], sessionId)) === 1) {
          const handle: SessionLockHandle = {
            sessionId,
            token,
            async renew(extendMs = ttlMs) {
              const ok = await run('lockRenew', key, [token, String(Math.max(1, Math.trunc(extendMs)))], sessionId);
              if (ok !== 1) throw new FlightLockLostError(`session lock of ${sessionId} is no longer held`, { context: { sessionId } });
            },
            async release() {
              return (await run('lockRelease', key, [token], sessionId)) === 1;
            },
          };
          return handle;
        }
        const left = giveUpAt - Date.now();
        if (left <= 0 || signal?.aborted) {
          throw new FlightLockTimeoutError(`session lock of ${sessionId} is held by someone else`, { context: { sessionId } });
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, Math.min(retryMs, left));
          function done() {
            clearTimeout(timer);
            signal?.removeEventListener('abort', done);
            resolve();
          }
          signal?.addEventListener('abort', done, { once: true });
        });
      }
    },
  };
}
