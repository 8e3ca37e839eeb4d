import { FlightValidationError } from '@flight/core';
import { type Clock, systemClock } from '@flight/core/adapter';

/** Options shared by both Redis adapters, resolved once by `resolveRedisOptions`. */
export interface RedisCoordinatorOptions {
  /** First segment of every key and of every notice channel. @default 'flight' */
  prefix?: string;
  /** Deadline of every Redis call; past it the call rejects with `FlightCoordinationError`. @default 2000 */
  commandTimeoutMs?: number;
  /**
   * Source of "now" for lease arithmetic. Production leaves it unset: the scripts read the Redis
   * server clock (`TIME`), one clock for every node. Tests pass a controllable clock.
   * @default the Redis server clock
   */
  clock?: () => number;
  /**
   * Node-local time and timers: a follower's wait timeout and the sweep of unclaimed wake-up tickets.
   * Lease arithmetic never reads it (see `clock`). @default systemClock
   */
  localClock?: Clock;
  /** Largest result (bytes, UTF-8) sent to Redis; larger ones reject with `FlightResultTooLargeError`. @default 16 MiB */
  maxPayloadBytes?: number;
  /**
   * After each owner write (taking ownership, complete, fail, cancel, expire), run `WAIT replicas
   * timeoutMs` so the write has reached replicas before the caller goes on. Costs one round trip plus the
   * replication delay per owner write, up to `timeoutMs` when replicas lag or are missing. By itself it
   * narrows (does not close) the window in which a failover loses a lease: see `unacknowledged`.
   * @default undefined (off)
   */
  waitReplicas?: WaitReplicasOptions | undefined;
  /**
   * A result of at most this many bytes (UTF-8) travels inside the terminal notice, so followers woken
   * by it return without reading it back (one round trip less). Larger results are read with `acquire`.
   * A notice reaches only the processes that wait on that flight; 0 turns it off. @default 8192
   */
  inlineResultBytes?: number;
}

/** `waitReplicas`: how many replicas must acknowledge an owner write, and what an unacknowledged one means. */
export interface WaitReplicasOptions {
  /** Replicas that must acknowledge each owner write (`WAIT`'s first argument). */
  replicas: number;
  /** How long one `WAIT` blocks for them (ms; `WAIT`'s second argument, 0 = forever). */
  timeoutMs: number;
  /**
   * What a write that fewer than `replicas` acknowledged within `timeoutMs` means.
   * - `'keep'`: it counts anyway (Redis keeps it; a failover before it replicates may lose it).
   * - `'retry'` (strict): taking ownership does not count until a replica has the record: the coordinator
   *   writes it again and waits, for up to `retryForMs`, and only then lets the caller run its supplier;
   *   past that the run is given up (its followers may take it over) and the caller gets
   *   `FlightReplicationError` (`E_FLIGHT_REPLICATION`). The owner's lease renewals are waited for too, and
   *   one that is not acknowledged counts as not renewed (the lease is lost as if Redis were unreachable).
   * - `'fail'` (strict): as `'retry'`, without retrying.
   * @default 'keep'
   */
  unacknowledged?: 'keep' | 'retry' | 'fail';
  /** With `unacknowledged: 'retry'`: how long taking ownership may wait for a replica's acknowledgement (ms). @default 10000 */
  retryForMs?: number;
}

/** `waitReplicas` resolved. */
export interface ResolvedWaitReplicas {
  replicas: number;
  timeoutMs: number;
  unacknowledged: 'keep' | 'retry' | 'fail';
  retryForMs: number;
  /** `unacknowledged` is not `'keep'`: unacknowledged owner writes do not count. */
  strict: boolean;
}

export const DEFAULT_REPLICA_RETRY_MS = 10_000;

export interface ResolvedRedisOptions {
  prefix: string;
  commandTimeoutMs: number;
  clock: (() => number) | undefined;
  localClock: Clock;
  maxPayloadBytes: number;
  waitReplicas: ResolvedWaitReplicas | undefined;
  inlineResultBytes: number;
}

export const DEFAULT_PREFIX = 'flight';
export const DEFAULT_COMMAND_TIMEOUT_MS = 2000;
export const DEFAULT_MAX_PAYLOAD_BYTES = 16 * 1024 * 1024;
export const DEFAULT_INLINE_RESULT_BYTES = 8192;
/** Largest accepted `inlineResultBytes`: a notice is one pub/sub message, kept well below Redis' buffers. */
export const MAX_INLINE_RESULT_BYTES = 1024 * 1024;

export function resolveRedisOptions(options: RedisCoordinatorOptions = {}): ResolvedRedisOptions {
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  if (typeof prefix !== 'string' || prefix.length === 0 || /[{}\s]/.test(prefix)) {
    throw new FlightValidationError(`prefix must be a non-empty string without braces or spaces, got ${JSON.stringify(prefix)}`);
  }
  const positive = (name: string, value: number | undefined, fallback: number) => {
    const v = value ?? fallback;
    if (!Number.isFinite(v) || v <= 0) throw new FlightValidationError(`${name} must be a positive number, got ${String(value)}`);
    return v;
  };
  const wait = options.waitReplicas === undefined ? undefined : resolveWaitReplicas(options.waitReplicas);
  const inline = options.inlineResultBytes ?? DEFAULT_INLINE_RESULT_BYTES;
  if (!Number.isInteger(inline) || inline < 0 || inline > MAX_INLINE_RESULT_BYTES) {
    throw new FlightValidationError(
      `inlineResultBytes must be an integer from 0 to ${MAX_INLINE_RESULT_BYTES}, got ${String(options.inlineResultBytes)}`,
    );
  }
  return {
    prefix,
    commandTimeoutMs: positive('commandTimeoutMs', options.commandTimeoutMs, DEFAULT_COMMAND_TIMEOUT_MS),
    clock: options.clock,
    localClock: options.localClock ?? systemClock,
    maxPayloadBytes: positive('maxPayloadBytes', options.maxPayloadBytes, DEFAULT_MAX_PAYLOAD_BYTES),
    waitReplicas: wait,
    inlineResultBytes: inline,
  };
}

function resolveWaitReplicas(wait: WaitReplicasOptions): ResolvedWaitReplicas {
  if (!Number.isInteger(wait.replicas) || wait.replicas < 1 || !Number.isFinite(wait.timeoutMs) || wait.timeoutMs < 0) {
    throw new FlightValidationError('waitReplicas needs replicas >= 1 and timeoutMs >= 0');
  }
  const unacknowledged = wait.unacknowledged ?? 'keep';
  if (unacknowledged !== 'keep' && unacknowledged !== 'retry' && unacknowledged !== 'fail') {
    throw new FlightValidationError(`waitReplicas.unacknowledged must be 'keep', 'retry' or 'fail', got ${JSON.stringify(unacknowledged)}`);
  }
  const retryForMs = wait.retryForMs ?? DEFAULT_REPLICA_RETRY_MS;
  if (!Number.isFinite(retryForMs) || retryForMs < 0) {
    throw new FlightValidationError(`waitReplicas.retryForMs must be a number >= 0, got ${String(wait.retryForMs)}`);
  }
  if (unacknowledged !== 'keep' && wait.timeoutMs === 0) {
    throw new FlightValidationError('strict waitReplicas needs timeoutMs > 0 (WAIT 0 blocks until acknowledged)');
  }
  return { replicas: wait.replicas, timeoutMs: wait.timeoutMs, unacknowledged, retryForMs, strict: unacknowledged !== 'keep' };
}
