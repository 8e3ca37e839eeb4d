/**
 * The coordinator's subscriber over node-redis: one duplicate for the coordinator's life, connected on
 * first use. node-redis re-subscribes by itself after a reconnect and emits 'ready' only once that is
 * done; on a cluster it keeps one sharded subscriber per master and routes each SSUBSCRIBE by its
 * channel's slot. Standalone, the duplicate speaks RESP3, so it also runs the re-read a follower sends
 * right behind its SSUBSCRIBE.
 */
import type { RedisSubscriber, RedisSubscriberHandlers } from '@flight/redis-scripts';
import { closeQuietly, isCluster, type NodeRedisClient, type NodeRedisCluster } from './client';
import { scriptCommand } from './commands';

/** Opens the subscriber connection of `client` once `ready` (its own connection) settles; `onClose` runs when it is closed. */
export function createNodeRedisSubscriber(
  client: NodeRedisClient | NodeRedisCluster,
  ready: Promise<unknown>,
  handlers: RedisSubscriberHandlers,
  onClose: () => void,
): RedisSubscriber {
  const cluster = isCluster(client);
  const sub = cluster ? client.duplicate() : client.duplicate({ RESP: 3 });
  let readyOnce = false;
  // Reconnects on its own; waiters fall back to polling, and forget listeners stop trusting what they hold.
  sub.on('error', () => handlers.onDisconnect?.());
  sub.on('end', () => handlers.onDisconnect?.());
  sub.on('ready', () => {
    if (readyOnce) handlers.onReconnect();
    readyOnce = true;
  });
  const listener = (message: string, channel: string) => handlers.onMessage(channel, message);
  let closing = false;
  const connected = (async () => {
    await ready;
    if (closing) throw new Error('subscriber closed');
    await sub.connect();
  })();
  connected.catch(() => undefined);
  /**
   * Every command of the subscriber is handed to node-redis in call order (reactions to one promise run
   * in the order they were added), so a script passed after a subscribe is written after its SSUBSCRIBE.
   */
  const inOrder = <T>(send: () => Promise<T>): Promise<T> => connected.then(send);
  const runScriptCommand = (args: (string | Buffer)[]) =>
    inOrder(() => (sub as ReturnType<NodeRedisClient['duplicate']>).sendCommand(args));
  return {
    subscribe(channels) {
      // A cluster routes one command by its first channel: one command per channel there.
      if (cluster) return inOrder(() => Promise.all(channels.map((channel) => sub.sSubscribe([channel], listener)))).then(() => undefined);
      return inOrder(() => sub.sSubscribe([...channels], listener)).then(() => undefined);
    },
    unsubscribe(channels) {
      if (cluster)
        return inOrder(() => Promise.all(channels.map((channel) => sub.sUnsubscribe([channel], listener)))).then(() => undefined);
      return inOrder(() => sub.sUnsubscribe([...channels], listener)).then(() => undefined);
    },
    ...(cluster
      ? {}
      : {
          scripts: {
            evalsha: (sha, keys, args) => runScriptCommand(scriptCommand('EVALSHA', sha, keys, args)),
            eval: (source, keys, args) => runScriptCommand(scriptCommand('EVAL', source, keys, args)),
          },
          ping: () => runScriptCommand(['PING']),
        }),
    async close() {
      closing = true;
      onClose();
      await closeQuietly(sub);
    },
  };
}
