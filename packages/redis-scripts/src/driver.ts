/**
 * The minimal Redis port the coordinator needs. Each adapter package (ioredis, node-redis) implements
 * only this, in a few dozen lines; everything else — scripts, keys, deadlines, error mapping,
 * notifications — lives once in `createRedisCoordinator`.
 */

/** A live subscription on the driver's dedicated subscriber connection. */
export interface RedisSubscription {
  /** Unsubscribes and closes the subscriber connection. */
  close(): Promise<void>;
}

export interface RedisSubscribeHandlers {
  /** Called with each message published on the channel. MUST NOT throw into the client. */
  onMessage(message: string): void;
  /** Called when the subscriber connection is ready again after a break (messages may have been lost). */
  onReconnect(): void;
}

export interface RedisDriver {
  /** `true` when the client is a Redis Cluster client. */
  readonly isCluster: boolean;
  /**
   * Runs `EVALSHA sha keys args`, routed (on a cluster) by `keys[0]`.
   * Rejects with the server's error; adapters MUST keep its message (the coordinator looks for `NOSCRIPT`).
   */
  evalsha(sha: string, keys: readonly string[], args: readonly string[]): Promise<unknown>;
  /** Runs `EVAL source keys args`, routed like `evalsha`. */
  eval(source: string, keys: readonly string[], args: readonly string[]): Promise<unknown>;
  /**
   * Opens a dedicated subscriber connection (a duplicate of the user's client) and subscribes to
   * `channel`. Resolves once subscribed. Called at most once at a time per coordinator.
   */
  subscribe(channel: string, handlers: RedisSubscribeHandlers): Promise<RedisSubscription>;
  /**
   * Runs `WAIT replicas timeoutMs` on the node that serves `key` and resolves with the number of
   * replicas that acknowledged. Optional: the coordinator rejects the `waitReplicas` option without it.
   */
  waitReplicas?(key: string, replicas: number, timeoutMs: number): Promise<number>;
  /** Closes what the driver opened itself (never the user's own client). */
  close(): Promise<void>;
}
