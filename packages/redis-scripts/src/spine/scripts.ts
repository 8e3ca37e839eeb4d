import type { ScriptArg, ScriptRunner } from '../driver';
import { isNoScript } from '../errors';
import { LUA_SCRIPTS, type LuaScriptName } from './lua.generated';

/**
 * Runs a script by its SHA1 and loads it with EVAL when the server answers NOSCRIPT (first use, a
 * restart, a failover, a new cluster node). The SHA1 covers the script's version line, so two
 * library versions sharing a Redis never run each other's scripts.
 */
export function runScript(
  driver: ScriptRunner,
  name: LuaScriptName,
  keys: readonly string[],
  args: readonly ScriptArg[],
): Promise<unknown> {
  const script = LUA_SCRIPTS[name];
  let sent: Promise<unknown>;
  try {
    sent = driver.evalsha(script.sha, keys, args);
  } catch (error) {
    sent = Promise.reject(error);
  }
  // One derived promise, not an async function's frame and its await: this runs for every script call.
  return sent.then(undefined, (error: unknown) => {
    if (!isNoScript(error)) throw error;
    return driver.eval(script.source, keys, args);
  });
}
