/**
 * The minimal Redis port the coordinator needs. Each adapter package (ioredis, node-redis) implements
 * only this, in a few dozen lines; everything else — scripts, keys, deadlines, error mapping,
 * notifications — lives once in `createRedisCoordinator`.
 */

/**
 * The one subscriber of a coordinator (sharded pub/sub: SSUBSCRIBE/SUNSUBSCRIBE, Redis >= 7.0). It owns
 * one dedicated connection (on a cluster, one per shard) for its whole life: opened lazily, reconnected by
 * the client, never replaced — so a subscribe that misses its deadline leaves no connection behind.
 */
export interface RedisSubscriber {
  /**
   * SSUBSCRIBE `channels` (batched: adapters group them by slot on a cluster). Resolves once the server
   * confirmed every one; MAY settle late (the caller applies its own deadline and handles late settles).
   */
  subscribe(channels: readonly string[]): Promise<void>;
  /**
   * Present only when the subscriber connection runs commands while subscribed (RESP3, standalone):
   * EVALSHA / EVAL sent through it go behind every SSUBSCRIBE already passed to `subscribe` on that same
   * connection, so Redis runs them once it holds those subscriptions. A follower's re-read then rides
   * with its subscription (one round trip) instead of waiting for the confirmation first.
   */
  readonly scripts?: ScriptRunner;
  /** SUNSUBSCRIBE `channels`. */
  unsubscribe(channels: readonly string[]): Promise<void>;
  /**
   * PING on the subscriber connection (standalone only): resolves once the server answered, after every
   * message it sent before. Lets the coordinator notice a connection that went silent without breaking.
   */
  ping?(): Promise<unknown>;
  /** Closes the subscriber connection(s). */
  close(): Promise<void>;
}

export interface RedisSubscriberHandlers {
  /** Called with each message of a subscribed channel. MUST NOT throw into the client. */
  onMessage(channel: string, message: string): void;
  /**
   * Called when the subscriber connection is ready again after a break: messages may have been lost,
   * and channels are re-confirmed by calling `subscribe` again (adapters resolve it only once the
   * server holds the subscription).
   */
  onReconnect(): void;
  /**
   * Called when the subscriber connection broke (or reported an error): messages may be missed from now
   * on, until `onReconnect`. May be called more than once per break.
   */
  onDisconnect?(): void;
}

/** A script argument: text, or bytes (a result stored as bytes: `RedisDriver.getBuffer`). */
export type ScriptArg = string | Buffer;

/** Runs scripts on one connection (see `RedisDriver.evalsha` / `eval` for the contract). */
export interface ScriptRunner {
  evalsha(sha: string, keys: readonly string[], args: readonly ScriptArg[]): Promise<unknown>;
  eval(source: string, keys: readonly string[], args: readonly ScriptArg[]): Promise<unknown>;
}

export interface RedisDriver extends ScriptRunner {
  /**
   * Runs `EVALSHA sha keys args`, routed (on a cluster) by `keys[0]`.
   * Rejects with the server's error; adapters MUST keep its message (the coordinator looks for `NOSCRIPT`).
   */
  evalsha(sha: string, keys: readonly string[], args: readonly ScriptArg[]): Promise<unknown>;
  /** Runs `EVAL source keys args`, routed like `evalsha`. */
  eval(source: string, keys: readonly string[], args: readonly ScriptArg[]): Promise<unknown>;
  /**
   * Runs `GET key` (routed by `key`) and resolves its value as bytes, or null. Optional: with it the
   * coordinator stores results as bytes (`storesBytes`), a compressed body without base64; the scripts'
   * replies stay text, and a result stored as bytes is read back through this.
   */
  getBuffer?(key: string): Promise<Buffer | null>;
  /**
   * Runs `SET key value PX ttlMs NX GET`, or `SET key value PXAT expireAtMs NX GET` when `expireAtMs` is
   * given (Redis >= 7.0), routed by `key`: creates `key` when it does not exist and resolves null, else
   * leaves it as it is and resolves its value. The coordinator passes `expireAtMs` (the record's own
   * expiry, on the server clock) so that the key lives exactly as long as the record's lease. Optional: without it
   * every acquire runs the script.
   */
  setIfAbsent?(key: string, value: string, ttlMs: number, expireAtMs?: number): Promise<string | null>;
  /**
   * Runs `SET key value PX ttlMs IFEQ expected` (Valkey >= 8.1, Redis >= 8.4), routed by `key`: replaces
   * the value of `key` only when it is `expected`, and resolves whether it did. A server without the
   * condition rejects it with its syntax error, which adapters MUST pass on as it is (the coordinator then
   * stops asking). Optional: without it every complete runs the script.
   */
  setIfEqual?(key: string, value: string | Buffer, ttlMs: number, expected: string | Buffer): Promise<boolean>;
  /**
   * Whose clock stamps the scripts' writes of `key`: on a cluster, the address of the master that holds
   * its slot now (undefined while unknown: its acquires then run the script); absent on a standalone
   * server (one clock). The fast acquire stamps a new record with the clock of the server that will hold
   * it, as seen in that server's own replies.
   */
  clockOf?(key: string): string | undefined;
  /**
   * `SCAN 0 MATCH pattern COUNT count` to its end, on every master of a cluster: yields each reply's keys
   * (a key may be yielded twice, as SCAN does). Optional: the read-only inspector lists flights with it.
   */
  scan?(pattern: string, count: number): AsyncIterable<string[]>;
  /** The logical database the client works on (0 on a cluster): notice channels name it. */
  readonly db: number;
  /**
   * Creates the subscriber (a duplicate of the user's client, connected on first use). The coordinator
   * calls it at most once.
   */
  createSubscriber(handlers: RedisSubscriberHandlers): RedisSubscriber;
  /**
   * Runs `WAIT replicas timeoutMs` on the node that serves `key` and resolves with the number of
   * replicas that acknowledged. Optional: the coordinator rejects the `waitReplicas` option without it.
   */
  waitReplicas?(key: string, replicas: number, timeoutMs: number): Promise<number>;
  /** Closes what the driver opened itself (never the user's own client). */
  close(): Promise<void>;
}
