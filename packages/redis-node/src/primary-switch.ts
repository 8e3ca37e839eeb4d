/**
 * Holds the coordinator's commands while a node-redis Sentinel client is still on a primary the Sentinels
 * replaced. node-redis follows the notices of one Sentinel; when another one leads a failover, the one it
 * follows hears of it up to a hello period (2 s) later, and until then the client keeps writing to the old
 * primary, which still takes writes (up to 10 s after a `SENTINEL FAILOVER`): a process on it and a process
 * on the promoted primary could each own the same flight. The watch listens to every Sentinel's
 * `+switch-master` (one small subscriber connection per Sentinel, found through the client's own Sentinel);
 * while the client's primary is one a switch replaced, a command waits until node-redis moves the client
 * (its `topology-change`), and one whose deadline comes first is refused by the coordinator like any call
 * Redis did not answer.
 */
import { parseSwitchMaster, REPLACED_PRIMARY_FOR_MS, ReplacedPrimaries, type PrimaryAddress } from '@flight/redis-scripts';
import { createClient } from 'redis';
import { closeQuietly, type NodeRedisClient, type NodeRedisSentinel } from './client';

export interface PrimarySwitchGate {
  /** Undefined when commands may go to the client's primary now; else resolves once they may. */
  whenClear(): Promise<void> | undefined;
  close(): Promise<void>;
}

/** Starts the watch for a Sentinel client (it finds the other Sentinels in the background). */
export function watchPrimarySwitch(client: NodeRedisSentinel): PrimarySwitchGate {
  const replaced = new ReplacedPrimaries();
  const watchers: NodeRedisClient[] = [];
  let closed = false;
  let changed: { promise: Promise<void>; wake: () => void } | undefined;
  const wake = () => {
    changed?.wake();
    changed = undefined;
  };
  const nextChange = () => {
    if (!changed) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      changed = { promise, wake: resolve };
    }
    return changed.promise;
  };
  const onTopologyChange = () => wake();
  client.on('topology-change', onTopologyChange);

  const isOnReplaced = (): boolean => {
    const master = client.getMasterNode();
    return master !== undefined && replaced.includes((old) => old.host === master.host && old.port === master.port);
  };
  const onSwitch = (message: string) => {
    // Matched by address: a client is on one primary, whatever name the Sentinels give it.
    const change = parseSwitchMaster(message);
    if (!change) return;
    replaced.add(change.old, change.promoted);
    // Commands waiting on it go once its time is up, whatever node-redis does.
    setTimeout(wake, REPLACED_PRIMARY_FOR_MS).unref();
    wake();
  };
  const subscribe = async (sentinel: PrimaryAddress) => {
    const watcher = createClient({ socket: { host: sentinel.host, port: sentinel.port } }) as unknown as NodeRedisClient & {
      subscribe(channel: string, listener: (message: string) => void): Promise<unknown>;
    };
    // It reconnects by itself (and subscribes again); a Sentinel that is down is one of several.
    watcher.on('error', () => undefined);
    watchers.push(watcher);
    await watcher.connect();
    await watcher.subscribe('+switch-master', onSwitch);
  };
  void findSentinels(client)
    .then((sentinels) => (closed ? undefined : Promise.all(sentinels.map((s) => subscribe(s).catch(() => undefined)))))
    .catch(() => undefined);

  return {
    whenClear() {
      if (!isOnReplaced()) return undefined;
      return (async () => {
        while (isOnReplaced()) {
          if (closed) throw new Error('closed while the client was on a replaced primary');
          await nextChange();
        }
      })();
    },
    async close() {
      closed = true;
      client.off('topology-change', onTopologyChange);
      wake();
      await Promise.all(watchers.map((watcher) => closeQuietly(watcher)));
    },
  };
}

/** The Sentinels that monitor the client's primary: the client's own, and those it knows of. */
async function findSentinels(client: NodeRedisSentinel): Promise<PrimaryAddress[]> {
  const own = client.getSentinelNode?.();
  const master = client.getMasterNode();
  if (!own || !master) return [];
  const asker = createClient({ socket: { host: own.host, port: own.port, reconnectStrategy: false } }) as unknown as NodeRedisClient;
  asker.on('error', () => undefined);
  try {
    await asker.connect();
    const masters = (await asker.sendCommand(['SENTINEL', 'MASTERS'])) as string[][];
    const name = masters.map(fields).find((m) => m.ip === master.host && Number(m.port) === master.port)?.name;
    if (!name) return [own];
    const others = ((await asker.sendCommand(['SENTINEL', 'SENTINELS', name])) as string[][]).map(fields);
    return [own, ...others.filter((s) => s.ip && s.port).map((s) => ({ host: s.ip!, port: Number(s.port) }))];
  } finally {
    await closeQuietly(asker);
  }
}

/** A Sentinel reply's flat `[field, value, …]` list as a record. */
function fields(flat: string[]): Record<string, string | undefined> {
  const record: Record<string, string | undefined> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) record[String(flat[i])] = String(flat[i + 1]);
  return record;
}
