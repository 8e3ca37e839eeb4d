/**
 * How the driver sends a command: once the client it created is connected (a given client is), routed by
 * its first key on a cluster, retried while a slot mid-migration answers `TRYAGAIN`, and held through
 * Sentinels while the client is on a replaced primary.
 */
import { isCluster, isSentinel, type AnyNodeRedisClient, type NodeRedisCluster } from './client';
import type { PrimarySwitchGate } from './primary-switch';

/** Delay between retries of a `TRYAGAIN` reply (a slot mid-migration). */
const TRYAGAIN_RETRY_DELAY_MS = 50;

/** Sends `args` (routed by `routingKey` on a cluster) with node-redis command `options`. */
export type Send = (routingKey: string | undefined, args: (string | Buffer)[], options?: object) => Promise<unknown>;

/** `EVALSHA sha numkeys keys… args…` (or EVAL) as one array. */
export const scriptCommand = (command: 'EVALSHA' | 'EVAL', head: string, keys: readonly string[], args: readonly (string | Buffer)[]) => [
  command,
  head,
  String(keys.length),
  ...keys,
  ...args,
];

async function sendToCluster(
  nodes: NodeRedisCluster,
  tryAgainWindowMs: number,
  routingKey: string | undefined,
  args: (string | Buffer)[],
  options?: object,
): Promise<unknown> {
  // A slot being migrated answers TRYAGAIN to a multi-key script whose keys are split between the two
  // nodes; node-redis passes it through (ioredis retries it), so retry here until the migration ends.
  const retryUntil = Date.now() + tryAgainWindowMs;
  for (;;) {
    try {
      return await nodes.sendCommand(routingKey, false, args, options);
    } catch (error) {
      if (!String((error as Error)?.message).startsWith('TRYAGAIN') || Date.now() >= retryUntil) throw error;
      await new Promise((resolve) => setTimeout(resolve, TRYAGAIN_RETRY_DELAY_MS));
    }
  }
}

/**
 * The sender of `client`. `ready` is the connection of a client the driver created (commands wait for it
 * until it settles, then go out at once); a given client is connected already.
 */
export function createSender(
  client: AnyNodeRedisClient,
  ready: Promise<unknown> | undefined,
  tryAgainWindowMs: number,
  /** Through Sentinels: holds commands while the client is on a replaced primary. */
  primarySwitch?: PrimarySwitchGate,
): Send {
  const sendNow: Send = (routingKey, args, options) => {
    if (isCluster(client)) return sendToCluster(client, tryAgainWindowMs, routingKey, args, options);
    try {
      if (isSentinel(client)) {
        // Every command is a write as far as it knows, so it goes to the primary.
        const held = primarySwitch?.whenClear();
        return held ? held.then(() => client.sendCommand(false, args, options)) : client.sendCommand(false, args, options);
      }
      return client.sendCommand(args, options);
    } catch (error) {
      return Promise.reject(error);
    }
  };
  if (!ready) return sendNow;
  let connected = false;
  ready.then(
    () => (connected = true),
    () => undefined,
  );
  return (routingKey, args, options) =>
    connected ? sendNow(routingKey, args, options) : ready.then(() => sendNow(routingKey, args, options));
}
