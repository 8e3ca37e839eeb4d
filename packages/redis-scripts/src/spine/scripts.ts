import type { ScriptArg, ScriptRunner } from '../driver';
import { isNoScript } from '../errors';
import { LUA_SCRIPTS, type LuaScriptName } from './lua.generated';

/** Where `args` reach a script's stale-copy arguments (see `scriptKeys`). */
const STALE_ARGS: Partial<Record<LuaScriptName, number>> = { acquire: 12, complete: 9, forget: 0 };

/**
 * The KEYS of script `name`: the flight's record, and its stale copy too for the scripts that read or write
 * it (acquire and complete when their stale arguments are sent, forget always).
 */
export function scriptKeys(
  name: LuaScriptName,
  keys: { list: readonly string[]; withStale?: readonly string[] },
  args: readonly unknown[],
) {
  const at = STALE_ARGS[name];
  return at !== undefined && args.length >= at && keys.withStale ? keys.withStale : keys.list;
}

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
