/**
 * Moves the coordinator's connections off a primary the Sentinels replaced. After a failover the old primary
 * still takes writes until the Sentinels turn it into a replica (up to 10 s after a `SENTINEL FAILOVER`, when
 * they next look at it): a process still on it and a process on the promoted primary could each own the same
 * flight. The Sentinels announce each switch on their `+switch-master` channel; the watch remembers the
 * replaced address and drops every tracked connection whose socket goes there: those open when the news
 * comes, and those that reach it later (a connection that was resolving its primary when the news came, or
 * asked a Sentinel that had not heard yet), as soon as their socket connects. ioredis connects a dropped
 * connection again through the Sentinels and sends the commands it had in flight again there (each flight
 * command is idempotent for its arguments). One small subscriber connection per Sentinel, so that any
 * Sentinel that is up brings the news.
 */
import { isIP } from 'node:net';
import { closeWithin, parseSwitchMaster, ReplacedPrimaries, type PrimaryAddress } from '@flight/redis-scripts';
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

/** A connection as far as the watch moves it: its socket, and its events. */
interface Movable {
  readonly stream?: { remoteAddress?: string; remotePort?: number; destroyed?: boolean; destroy(): void };
  on(event: 'connect' | 'ready', listener: () => void): unknown;
  removeListener(event: 'connect' | 'ready', listener: () => void): unknown;
}

export interface PrimarySwitchWatch {
  /** Moves `connection` too when it is on a replaced primary (the command client is tracked from the start). */
  track(connection: IoredisClient): void;
  /** Stops moving `connection` (it is being closed). */
  untrack(connection: IoredisClient): void;
  close(): Promise<void>;
}

/** Starts the watch for `client`, or undefined when it does not find its primary through Sentinels. */
export function watchPrimarySwitch(client: IoredisClient): PrimarySwitchWatch | undefined {
  const options = client.options as SentinelShape | undefined;
  if (client.isCluster || !options?.name || !options.sentinels?.length) return undefined;
  const replaced = new ReplacedPrimaries();
  const connections = new Map<Movable, () => void>();
  const track = (connection: IoredisClient) => {
    const movable = connection as unknown as Movable;
    if (connections.has(movable)) return;
    // 'connect' comes before the ready check's reply (before any queued command is sent); 'ready' too, for a
    // connection without a ready check, which sends its queued commands at once.
    const check = () => moveIfReplaced(movable, replaced);
    connections.set(movable, check);
    movable.on('connect', check);
    movable.on('ready', check);
  };
  const untrack = (connection: IoredisClient) => {
    const movable = connection as unknown as Movable;
    const check = connections.get(movable);
    if (!check) return;
    connections.delete(movable);
    movable.removeListener('connect', check);
    movable.removeListener('ready', check);
  };
  const onSwitch = (message: string) => {
    const change = parseSwitchMaster(message);
    if (!change || change.name !== options.name) return;
    replaced.add(reachedAs(options, change.old), reachedAs(options, change.promoted));
    for (const connection of connections.keys()) moveIfReplaced(connection, replaced);
  };
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
    watcher.on('message', (_channel: string, message: string) => onSwitch(message));
    watcher.subscribe('+switch-master').catch(() => undefined);
    return watcher;
  });
  track(client);
  return {
    track,
    untrack,
    async close() {
      for (const connection of [...connections.keys()]) untrack(connection as unknown as IoredisClient);
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

/**
 * Drops `connection` when its socket goes to a replaced primary. The socket is destroyed, not ended: an
 * answer the old primary sends after this must never be read (it could make this process the owner of a
 * flight another process owns on the promoted primary). ioredis then connects again.
 */
function moveIfReplaced(connection: Movable, replaced: ReplacedPrimaries): void {
  const stream = connection.stream;
  if (!stream || stream.destroyed || stream.remotePort === undefined) return;
  const { remoteAddress, remotePort } = stream;
  if (replaced.includes((old) => old.port === remotePort && sameHost(remoteAddress, old.host))) stream.destroy();
}

/** The address a client reaches a server the Sentinels name `host:port` at (through `natMap` when set). */
function reachedAs(options: SentinelShape, named: PrimaryAddress): PrimaryAddress {
  const key = `${named.host}:${named.port}`;
  const mapped = typeof options.natMap === 'function' ? options.natMap(key) : options.natMap?.[key];
  return mapped ?? named;
}

/**
 * Whether a socket's remote address is `host` (an IPv4 address may come back IPv6-mapped). A host name (the
 * Sentinels announce names) is taken to match: the socket knows only the address it resolved to.
 */
function sameHost(remote: string | undefined, host: string): boolean {
  return isIP(host) === 0 || remote === host || remote === `::ffff:${host}`;
}
