/** A Redis driver that names, in order, every command the coordinator sends through it (tests of which path ran). */
import { LUA_SCRIPTS, type RedisDriver } from '@flight/redis-scripts';

/**
 * `driver` with every flight command the coordinator sends named in `sent`: a script by its name, the fast
 * acquire as `SET NX GET`, the untouched complete as `SET IFEQ`. Without `conditional`, it has no
 * `setIfEqual` (every complete runs the script).
 */
export function countedDriver(driver: RedisDriver, sent: string[], conditional = true): RedisDriver {
  const scriptOf = new Map<string, string>(Object.values(LUA_SCRIPTS).map((s) => [s.sha, s.name]));
  return {
    db: driver.db,
    evalsha: (sha, keys, args) => (sent.push(scriptOf.get(sha) ?? sha), driver.evalsha(sha, keys, args)),
    eval: (source, keys, args) => driver.eval(source, keys, args),
    setIfAbsent: (key, value, ttlMs, expireAtMs) => (sent.push('SET NX GET'), driver.setIfAbsent!(key, value, ttlMs, expireAtMs)),
    ...(conditional
      ? { setIfEqual: (key, value, ttlMs, expected) => (sent.push('SET IFEQ'), driver.setIfEqual!(key, value, ttlMs, expected)) }
      : {}),
    getBuffer: (key) => driver.getBuffer!(key),
    createSubscriber: (handlers) => driver.createSubscriber(handlers),
    close: () => driver.close(),
  };
}
