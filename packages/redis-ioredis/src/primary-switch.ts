/**
 * Moves the coordinator's connections off a primary the Sentinels replaced. After a failover the old primary
 * still takes writes until the Sentinels turn it into a replica (up to 10 s after a `SENTINEL FAILOVER`, when
 * they next look at it): a process still on it and a process on the promoted primary could each own the same
 * flight. The Sentinels announce each switch on their `+switch-master` channel; every tracked connection still
 * on the old address is dropped then, and ioredis connects it again through the Sentinels, to the promoted
 * primary (the commands it had in flight are sent again there: each flight command is idempotent for its
 * arguments). One small subscriber connection per Sentinel, so that any Sentinel that is up brings the news.
 */
import { isIP } from 'node:net';
import { closeWithin } from '@flight/redis-scripts';
import { Redis, type RedisOptions } from 'ioredis';
import type { IoredisClient } from './client';

/** The options of an ioredis client that finds its primary through Sentinels, as far as the watch reads them. */
interface SentinelShape {
  sentinels?: { host?: string; port?: number }[] | null;
  name?: string;
  sentinelUsername?: string;
  sentinelPassword?: string;
  enableTLSForSentinelMode?: boolean;
  sentinelTLS?: RedisOptions['tls'];
  natMap?: Record<string, { host: string; port: number }> | ((key: string) => { host: string; port: number } | null);
}

/** A connection as far as the watch moves it: where its socket goes, and how to drop it. */
interface Movable {
  readonly status?: string;
  readonly stream?: { remoteAddress?: string; remotePort?: number };
  disconnect(reconnect?: boolean): void;
}

export interface PrimarySwitchWatch {
  /** Connections to move when their primary is replaced (the command client is tracked from the start). */
  readonly connections: Set<IoredisClient>;
  close(): Promise<void>;
}

/** Starts the watch for `client`, or undefined when it does not find its primary through Sentinels. */
export function watchPrimarySwitch(client: IoredisClient): PrimarySwitchWatch | undefined {
  const options = client.options as SentinelShape | undefined;
  if (client.isCluster || !options?.name || !options.sentinels?.length) return undefined;
  const connections = new Set<IoredisClient>([client]);
  const watchers = options.sentinels.map((sentinel) => {
    const watcher = new Redis({
      host: sentinel.host ?? '127.0.0.1',
      port: sentinel.port ?? 26379,
      ...(options.sentinelUsername ? { username: options.sentinelUsername } : {}),
      ...(options.sentinelPassword ? { password: options.sentinelPassword } : {}),
      ...(options.enableTLSForSentinelMode && options.sentinelTLS ? { tls: options.sentinelTLS } : {}),
      enableReadyCheck: false,
      maxRetriesPerRequest: null,
    });
    // It reconnects by itself (and subscribes again); a Sentinel that is down is one of several.
    watcher.on('error', () => undefined);
    watcher.on('message', (_channel: string, message: string) => moveOff(message, options, connections));
    watcher.subscribe('+switch-master').catch(() => undefined);
    return watcher;
  });
  return {
    connections,
    async close() {
      connections.clear();
      await Promise.all(
        watchers.map((watcher) =>
          closeWithin(
            1000,
            () => watcher.quit(),
            () => watcher.disconnect(),
          ),
        ),
      );
    },
  };
}

/** `+switch-master` says `<name> <old ip> <old port> <new ip> <new port>`: drops the connections on the old one. */
function moveOff(message: string, options: SentinelShape, connections: Set<IoredisClient>): void {
  const [name, oldHost, oldPort] = message.split(' ');
  if (name !== options.name || !oldHost || !oldPort) return;
  const old = reachedAs(options, oldHost, Number(oldPort));
  for (const connection of connections as Set<IoredisClient & Movable>) {
    const stream = connection.stream;
    if (connection.status !== 'ready' || stream?.remotePort !== old.port) continue;
    if (!sameHost(stream.remoteAddress, old.host)) continue;
    connection.disconnect(true);
  }
}

/** The address a client reaches a server the Sentinels name `host:port` at (through `natMap` when set). */
function reachedAs(options: SentinelShape, host: string, port: number): { host: string; port: number } {
  const key = `${host}:${port}`;
  const mapped = typeof options.natMap === 'function' ? options.natMap(key) : options.natMap?.[key];
  return mapped ?? { host, port };
}

/**
 * Whether a socket's remote address is `host` (an IPv4 address may come back IPv6-mapped). A host name (the
 * Sentinels announce names) is taken to match: the socket knows only the address it resolved to.
 */
function sameHost(remote: string | undefined, host: string): boolean {
  return isIP(host) === 0 || remote === host || remote === `::ffff:${host}`;
}
