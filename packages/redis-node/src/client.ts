/** The parts of node-redis clients the driver uses (structural: `redis` 5 and 6 both fit). */
import { closeWithin } from '@flight/redis-scripts';

export interface Closable {
  connect(): Promise<unknown>;
  sSubscribe(channels: string[], listener: (message: string, channel: string) => unknown): Promise<unknown>;
  sUnsubscribe(channels: string[], listener?: (message: string, channel: string) => unknown): Promise<unknown>;
  on(event: string, listener: (...args: any[]) => void): unknown;
  close?(): Promise<void>;
  quit?(): Promise<unknown>;
  destroy?(): void;
}

/** The part of a node-redis client (`createClient`) used here. Structural: `redis` 5 and 6 both fit. */
export interface NodeRedisClient extends Closable {
  sendCommand(args: (string | Buffer)[], options?: object): Promise<unknown>;
  duplicate(overrides?: { RESP?: 2 | 3 }): Closable & Pick<NodeRedisClient, 'sendCommand'>;
  readonly options?: { database?: number } | undefined;
}

/** The part of a node-redis cluster client (`createCluster`) used here. */
export interface NodeRedisCluster extends Closable {
  sendCommand(firstKey: string | undefined, isReadonly: boolean | undefined, args: (string | Buffer)[], options?: object): Promise<unknown>;
  duplicate(): Closable;
  readonly masters: readonly unknown[];
  /** The client of one node of `masters`. */
  nodeClient(node: unknown): Promise<Pick<NodeRedisClient, 'sendCommand'>>;
}

/**
 * The part of a node-redis Sentinel client (`createSentinel`) used here: commands go to the primary the
 * Sentinels name (node-redis moves them to a promoted replica by itself), and its own pub/sub connection
 * follows the primary too.
 */
export interface NodeRedisSentinel extends Closable {
  sendCommand(isReadonly: boolean | undefined, args: (string | Buffer)[], options?: object): Promise<unknown>;
  /** The primary's address as the client knows it (what tells a Sentinel client from the others). */
  getMasterNode(): { host: string; port: number } | undefined;
  /** The Sentinel the client follows. */
  getSentinelNode?(): { host: string; port: number } | undefined;
  off(event: string, listener: (...args: any[]) => void): unknown;
}

/** Any node-redis client the driver takes. */
export type AnyNodeRedisClient = NodeRedisClient | NodeRedisCluster | NodeRedisSentinel;

export function isCluster(client: AnyNodeRedisClient): client is NodeRedisCluster {
  return 'masters' in client;
}

export function isSentinel(client: AnyNodeRedisClient): client is NodeRedisSentinel {
  return typeof (client as Partial<NodeRedisSentinel>).getMasterNode === 'function';
}

/** Closes a node-redis connection within a second, destroying it when it does not close by then. */
export function closeQuietly(client: Closable): Promise<void> {
  return closeWithin(
    1000,
    async () => (client.close ? client.close() : client.quit?.()),
    () => client.destroy?.(),
  );
}
