/**
 * The coordinator's subscriber over ioredis: one duplicate connection for the coordinator's life (one per
 * master on a Cluster, ioredis' sharded subscribers), SSUBSCRIBE grouped by slot, reconnects reported to
 * the coordinator, which re-subscribes.
 */
import { closeWithin, clusterKeySlot, type RedisSubscriber, type RedisSubscriberHandlers } from '@flight/redis-scripts';
import type { IoredisClient } from './client';
import type { PrimarySwitchWatch } from './primary-switch';

/** On a cluster, one SSUBSCRIBE per slot (ioredis routes each command by its channels' slot). */
function bySlot(channels: readonly string[], isCluster: boolean): string[][] {
  if (!isCluster) return [[...channels]];
  const groups = new Map<number, string[]>();
  for (const channel of channels) {
    const slot = clusterKeySlot(channel);
    const group = groups.get(slot);
    if (group) group.push(channel);
    else groups.set(slot, [channel]);
  }
  return [...groups.values()];
}

/**
 * Opens the subscriber connection of `client`; `onClose` runs when it is closed. `primarySwitch`: the watch
 * that moves the connection while open when its primary is replaced (through Sentinels).
 */
export function createIoredisSubscriber(
  client: IoredisClient,
  isCluster: boolean,
  handlers: RedisSubscriberHandlers,
  primarySwitch: Pick<PrimarySwitchWatch, 'track' | 'untrack'> | undefined,
  onClose: () => void,
): RedisSubscriber {
  // Standalone: it queues commands while it connects, and does not re-subscribe by itself (ioredis would
  // emit 'ready' before re-subscribing): the coordinator re-subscribes on 'ready' and counts a wait
  // covered only once that is confirmed.
  // No ready check: ioredis writes an SSUBSCRIBE issued while the connection is between 'connect' and
  // 'ready' at once (pub/sub commands may run while Redis loads), ahead of the check's INFO, which a
  // subscribed RESP2 connection refuses; the failed check then dropped the connection and the
  // subscriptions it had confirmed.
  // Cluster: sharded subscribers, one connection per master, re-subscribed by ioredis per shard.
  const sub = isCluster
    ? client.duplicate([], { shardedSubscribers: true })
    : client.duplicate({ enableOfflineQueue: true, autoResubscribe: false, enableReadyCheck: false });
  primarySwitch?.track(sub);
  // Every 'ready' but the first re-subscribes, and so does the first when a connection closed before
  // it: that connection may have confirmed subscriptions that are gone now.
  let readyOnce = false;
  let closedBeforeReady = false;
  // Reconnects on its own; waiters fall back to polling, and forget listeners stop trusting what they hold.
  sub.on('error', () => handlers.onDisconnect?.());
  sub.on('close', () => {
    closedBeforeReady = !readyOnce;
    handlers.onDisconnect?.();
  });
  sub.on(isCluster ? 'subscribersReady' : 'ready', () => {
    if (readyOnce || closedBeforeReady) handlers.onReconnect();
    readyOnce = true;
  });
  sub.on('smessage', (channel: string, message: string) => handlers.onMessage(channel, message));
  return {
    async subscribe(channels) {
      await Promise.all(bySlot(channels, isCluster).map((group) => sub.ssubscribe(...group)));
    },
    async unsubscribe(channels) {
      await Promise.all(bySlot(channels, isCluster).map((group) => sub.sunsubscribe(...group)));
    },
    // Standalone: PING is allowed on a subscribed connection and answered after every message before it.
    ...(isCluster ? {} : { ping: () => sub.call('PING') }),
    async close() {
      primarySwitch?.untrack(sub);
      onClose();
      await closeWithin(
        1000,
        () => sub.quit(),
        () => sub.disconnect(),
      );
    },
  };
}
