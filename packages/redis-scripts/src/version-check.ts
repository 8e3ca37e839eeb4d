/** The Redis server version check: the scripts need Redis 7.0, asked once per coordinator. */
import type { ScriptRunner } from './driver';
import { FlightRedisVersionError } from './errors';
import { runScript } from './spine/scripts';

/** The oldest Redis the scripts run on (`#!lua` flags, sharded pub/sub, `redis.REDIS_VERSION`). */
export const MIN_REDIS_VERSION = '7.0.0';

/** Throws `FlightRedisVersionError` unless `version` (the probe script's answer) is at least 7.0. */
export function assertRedisVersion(version: string): void {
  const major = Number(/^(\d+)\./.exec(version)?.[1] ?? 0);
  if (!(major >= 7)) {
    throw new FlightRedisVersionError(
      `@flight needs Redis >= ${MIN_REDIS_VERSION} (sharded pub/sub, #!lua script flags); the server is ${version || 'older than 7.0'}`,
      { context: { version: version || 'unknown' } },
    );
  }
}

export interface VersionCheck {
  /** The server passed the check (set once `run` resolved). */
  passed: boolean;
  /** Asks the server once; after a failure to reach it, asks again on the next call. */
  run(): Promise<void>;
}

export function createVersionCheck(driver: ScriptRunner): VersionCheck {
  let pending: Promise<void> | undefined;
  const check: VersionCheck = {
    passed: false,
    run() {
      pending ??= (async () => {
        const version = String(await runScript(driver, 'probe', [], []));
        assertRedisVersion(version);
        check.passed = true;
      })().catch((error: unknown) => {
        // A server too old stays too old; anything else (Redis unreachable) is asked again next time.
        if (!(error instanceof FlightRedisVersionError)) pending = undefined;
        throw error;
      });
      return pending;
    },
  };
  return check;
}
