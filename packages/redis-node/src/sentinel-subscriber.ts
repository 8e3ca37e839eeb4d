/**
 * The coordinator's subscriber over a node-redis Sentinel client: its own pub/sub connection, which
 * node-redis keeps on the primary the Sentinels name and re-subscribes there after a failover. A failover
 * (`topology-change` MASTER_CHANGE) is reported as a break and a reconnect: notices published meanwhile
 * may be lost, so the coordinator re-confirms its channels and re-reads the flights its followers wait on.
 */
import type { RedisSubscriber, RedisSubscriberHandlers } from '@flight/redis-scripts';
import type { NodeRedisSentinel } from './client';

export function createSentinelSubscriber(
  client: NodeRedisSentinel,
  handlers: RedisSubscriberHandlers,
  onClose: () => void,
): RedisSubscriber {
  const listener = (message: string, channel: string) => handlers.onMessage(channel, message);
  const onError = () => handlers.onDisconnect?.();
  const onTopologyChange = (event: { type?: string } | undefined) => {
    if (event?.type !== 'MASTER_CHANGE') return;
    handlers.onDisconnect?.();
    handlers.onReconnect();
  };
  client.on('error', onError);
  client.on('topology-change', onTopologyChange);
  const subscribed = new Set<string>();
  return {
    async subscribe(channels) {
      await client.sSubscribe([...channels], listener);
      for (const channel of channels) subscribed.add(channel);
    },
    async unsubscribe(channels) {
      for (const channel of channels) subscribed.delete(channel);
      await client.sUnsubscribe([...channels], listener);
    },
    async close() {
      onClose();
      client.off('error', onError);
      client.off('topology-change', onTopologyChange);
      // The client is the user's: only this coordinator's subscriptions end.
      if (subscribed.size > 0) await client.sUnsubscribe([...subscribed], listener).catch(() => undefined);
      subscribed.clear();
    },
  };
}
