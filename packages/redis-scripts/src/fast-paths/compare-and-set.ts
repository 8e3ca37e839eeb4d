/**
 * The conditional write of the untouched complete (untouched-complete.ts): `SET key value PX ttl IFEQ
 * expected` where the server has it (Valkey >= 8.1, Redis >= 8.4), else the same write by the small
 * `compareAndSet` script. The first refusal of the condition (a syntax error: nothing written) switches
 * the coordinator to the script for good, and that write goes by the script at once.
 *
 * Both forms write only while the key holds `expected`, byte for byte, and resolve whether they wrote. The
 * script costs Redis about a GET and a SET plus the floor of any Lua call, far less than the complete
 * script that decodes and checks the record (bench/profiles/redis.md).
 */
import type { RedisDriver, ScriptRunner } from '../driver';
import { runScript } from '../spine/scripts';

export type CompareAndSet = (key: string, value: string | Buffer, ttlMs: number, expected: string | Buffer) => Promise<boolean>;

/** A server without the conditional SET refuses its arguments. */
const NO_CONDITIONAL_SET = /syntax error|wrong number of arguments|unknown command/i;

export function createCompareAndSet(setIfEqual: NonNullable<RedisDriver['setIfEqual']>, scripts: ScriptRunner): CompareAndSet {
  let native = true;
  const byScript: CompareAndSet = (key, value, ttlMs, expected) =>
    runScript(scripts, 'compareAndSet', [key], [expected, value, String(ttlMs)]).then((wrote) => wrote === 1);
  return (key, value, ttlMs, expected) => {
    if (!native) return byScript(key, value, ttlMs, expected);
    return setIfEqual(key, value, ttlMs, expected).then(undefined, (error: unknown) => {
      // Only the refusal of the condition goes to the script: any other error (a lost connection, a
      // timeout) is the caller's, even when another write has switched to the script meanwhile.
      if (!(error instanceof Error) || !NO_CONDITIONAL_SET.test(error.message)) throw error;
      native = false;
      return byScript(key, value, ttlMs, expected);
    });
  };
}
