/**
 * The Redis coordinator, shared by both adapters: the Lua scripts behind core's `FlightCoordinator`
 * port, with deadlines, typed errors, payload checks and the server version check; follower wake-up
 * lives in notifications.ts.
 */
import {
  flightId,
  FlightResultTooLargeError,
  FlightValidationError,
  transitions,
  type AcquireReply,
  type CancelReply,
  type ExpireReply,
  type ForgetReply,
  type StreamingFlightCoordinator,
  type FlightRef,
  type WriteReply,
  type Fence,
  type AcquireOutcome,
} from '@flight/core';
import type { RedisDriver, ScriptRunner } from './driver';
import { FlightRedisVersionError, toFlightRedisError, withDeadline } from './errors';
import { flightKeys, noticeChannel, type FlightKeys } from './keys';
import type { LuaScriptName } from './lua.generated';
import { createNotifications, type NotificationCounters } from './notifications';
import { resolveRedisOptions, type RedisCoordinatorOptions } from './options';
import { decodeReply, type ScriptReply } from './reply';
import { runScript } from './scripts';
import { createRedisStreams } from './streams';

/** Longest failure message stored with a FAILED flight; longer ones are cut. */
export const MAX_ERROR_MESSAGE_LENGTH = 4096;

/** The oldest Redis the scripts run on (`#!lua` flags, sharded pub/sub, `redis.REDIS_VERSION`). */
export const MIN_REDIS_VERSION = '7.0.0';

export interface RedisCoordinator extends StreamingFlightCoordinator {
  /** Followers currently waiting on this coordinator (all share one subscriber connection). */
  readonly waiting: number;
  /** Wake-up counters of this coordinator's subscriber (live values). */
  readonly notifications: NotificationCounters;
}

/** Flights whose keys are remembered per generation (a digest each; see `keysOf`). */
const KEY_CACHE_SIZE = 4096;

const ACQUIRE_OUTCOMES = new Set<string>(['OWNER_NEW', 'OWNER_TAKEOVER', 'FOLLOWER_WAIT', 'REPLAY_SUCCESS', 'REPLAY_FAILURE']);

/** Throws `FlightRedisVersionError` unless `version` (the probe script's answer) is at least 7.0. */
export function assertRedisVersion(version: string): void {
  const major = Number(/^(\d+)\./.exec(version)?.[1] ?? 0);
  if (!(major >= 7)) {
    throw new FlightRedisVersionError(
      `@flight needs Redis >= ${MIN_REDIS_VERSION} (sharded pub/sub, #!lua script flags); the server is ${version || 'older than 7.0'}`,
      { context: { version: version || 'unknown' } },
    );
  }
}

interface CachedKeys extends FlightKeys {
  channel: string;
  /** The run this process last followed on the flight (from a FOLLOWER_WAIT reply): its notices carry its nonce. */
  followed?: { epoch: number; nonce: string } | undefined;
}

export function createRedisCoordinator(driver: RedisDriver, options: RedisCoordinatorOptions = {}): RedisCoordinator {
  const opts = resolveRedisOptions(options);
  if (opts.waitReplicas && !driver.waitReplicas) {
    throw new FlightValidationError('waitReplicas is not supported by this client');
  }
  const notifications = createNotifications(driver, { commandTimeoutMs: opts.commandTimeoutMs });
  let closed = false;
  /** The server version check, once per coordinator (retried after a failure to reach Redis). */
  let versionChecked = false;
  let versionCheck: Promise<void> | undefined;

  const nowArg = () => (opts.clock ? String(Math.trunc(opts.clock())) : '');

  /**
   * Keys of recent flights: an owner's acquire and complete hash the same ref once. Two generations of at
   * most KEY_CACHE_SIZE each: when the newer fills up it becomes the older and the older is dropped whole
   * (evicting one oldest entry at a time from a Map walks over the holes earlier deletions left).
   */
  let recentKeys = new Map<string, CachedKeys>();
  let olderKeys = new Map<string, CachedKeys>();
  function keysOf(ref: FlightRef): CachedKeys {
    const id = flightId(ref);
    let keys = recentKeys.get(id);
    if (keys) return keys;
    keys = olderKeys.get(id);
    if (!keys) {
      const { tag, meta, list } = flightKeys(opts.prefix, ref);
      keys = { tag, meta, list, channel: noticeChannel(opts.prefix, tag, driver.db), followed: undefined };
    }
    if (recentKeys.size >= KEY_CACHE_SIZE) {
      olderKeys = recentKeys;
      recentKeys = new Map();
    }
    recentKeys.set(id, keys);
    return keys;
  }

  function checkVersion(): Promise<void> {
    versionCheck ??= (async () => {
      const version = String(await runScript(driver, 'probe', [], []));
      assertRedisVersion(version);
      versionChecked = true;
    })().catch((error: unknown) => {
      // A server too old stays too old; anything else (Redis unreachable) is asked again next time.
      if (!(error instanceof FlightRedisVersionError)) versionCheck = undefined;
      throw error;
    });
    return versionCheck;
  }

  /** Every Redis call goes through here: version check on first use, deadline, one error mapping. */
  async function call<T>(operation: string, ref: FlightRef | undefined, run: () => Promise<T>): Promise<T> {
    try {
      if (!versionChecked) await withDeadline(checkVersion(), opts.commandTimeoutMs);
      return await withDeadline(run(), opts.commandTimeoutMs);
    } catch (error) {
      throw toFlightRedisError(error, operation, ref ? { stage: ref.stage, key: ref.key } : {});
    }
  }

  function script(
    name: LuaScriptName,
    ref: FlightRef,
    args: readonly string[],
    ownerWrite: boolean,
    keys: CachedKeys = keysOf(ref),
    /** The connection to run it on: the command connection unless a re-read rides with a subscription. */
    via: ScriptRunner = driver,
  ): Promise<ScriptReply> {
    if (versionChecked && !(ownerWrite && opts.waitReplicas)) {
      // The common case in one promise chain: no async frames around the command.
      return withDeadline(runScript(via, name, keys.list, args), opts.commandTimeoutMs).then(
        (raw) => decodeReply(raw, ref), // throws FlightCoordinationError only, which the mapping keeps as it is
        (error: unknown) => {
          throw toFlightRedisError(error, name, { stage: ref.stage, key: ref.key });
        },
      );
    }
    return call(name, ref, async () => {
      const reply = decodeReply(await runScript(via, name, keys.list, args), ref);
      if (ownerWrite && opts.waitReplicas && driver.waitReplicas) {
        await driver.waitReplicas(keys.meta, opts.waitReplicas.replicas, opts.waitReplicas.timeoutMs);
      }
      return reply;
    });
  }

  /** Arguments of an owner write: now, the flight's channel, the fence. */
  const fenceArgs = (fence: Fence, keys: CachedKeys) => [nowArg(), keys.channel, fence.ownerId, fence.ownerToken, String(fence.epoch)];

  function writeReply(reply: ScriptReply): WriteReply {
    if (reply.code === 'OK' && reply.meta) return { ok: true, meta: reply.meta };
    const code = reply.code === 'FORGOTTEN' ? 'FORGOTTEN' : 'FENCED';
    return { ok: false, code, status: reply.meta?.status ?? null, epoch: reply.meta?.epoch ?? null };
  }

  function ms(name: string, value: number): string {
    if (!Number.isFinite(value) || value < 0) throw new FlightValidationError(`${name} must be a non-negative number, got ${value}`);
    return String(Math.trunc(value));
  }

  function read(ref: FlightRef, withResult: boolean, via?: ScriptRunner): Promise<ScriptReply> {
    return script('read', ref, [nowArg(), withResult ? '1' : '0'], false, undefined, via);
  }

  return {
    ...createRedisStreams({ driver, prefix: opts.prefix, notifications, keysOf, call, nowArg, fenceArgs, ms }),

    get waiting() {
      return notifications.waiting;
    },

    get notifications() {
      return notifications.counters;
    },

    async acquire(input) {
      const keys = keysOf(input);
      const args = [
        nowArg(),
        input.sessionId === undefined ? '0' : '1',
        input.sessionId ?? '',
        input.ownerId,
        input.ownerToken,
        input.joinEpoch === undefined ? '' : String(input.joinEpoch),
        ms('takeoverAfterMs', input.takeoverAfterMs),
        ms('leaseTtlMs', input.leaseTtlMs),
        ms('maxRunMs', input.maxRunMs),
        input.startRunning ? '1' : '0',
      ];
      // Stored only by a record this call creates; not sent at all without one.
      if (input.traceparent) args.push(input.traceparent);
      // Taken before the command is sent: see `Ticket` in notifications.ts.
      const ticket = notifications.beginAcquire(keys.channel);
      let reply: ScriptReply;
      try {
        reply = await script('acquire', input, args, true, keys);
      } catch (error) {
        if (ticket) notifications.endAcquire(ticket, null);
        throw error;
      }
      if (ticket) notifications.endAcquire(ticket, reply.code === 'FOLLOWER_WAIT' && !closed ? reply.meta : null);
      if (reply.code === 'FOLLOWER_WAIT' && reply.meta) keys.followed = { epoch: reply.meta.epoch, nonce: reply.meta.nonce };
      if (!ACQUIRE_OUTCOMES.has(reply.code) || !reply.meta) {
        throw toFlightRedisError(new Error(`unexpected acquire reply ${reply.code}`), 'acquire', { stage: input.stage, key: input.key });
      }
      const out: AcquireReply = { outcome: reply.code as AcquireOutcome, meta: reply.meta };
      if (reply.code === 'REPLAY_SUCCESS') out.result = reply.result;
      return out;
    },

    async markRunning(fence, lease) {
      const keys = keysOf(fence);
      return writeReply(await script('markRunning', fence, [...fenceArgs(fence, keys), ms('leaseTtlMs', lease.leaseTtlMs)], false, keys));
    },

    async heartbeat(fence, lease) {
      const keys = keysOf(fence);
      return writeReply(await script('heartbeat', fence, [...fenceArgs(fence, keys), ms('leaseTtlMs', lease.leaseTtlMs)], false, keys));
    },

    async complete(fence, input) {
      if (typeof input.result !== 'string') throw new FlightValidationError('result must be a string');
      // UTF-8 takes at most 3 bytes per UTF-16 unit: count the bytes only when the length cannot decide.
      if (input.result.length * 3 > opts.maxPayloadBytes) {
        const bytes = Buffer.byteLength(input.result, 'utf8');
        if (bytes > opts.maxPayloadBytes) {
          throw new FlightResultTooLargeError(`result of ${bytes} bytes exceeds maxPayloadBytes (${opts.maxPayloadBytes})`, {
            context: { stage: fence.stage, key: fence.key, bytes },
          });
        }
      }
      const keys = keysOf(fence);
      const args = [...fenceArgs(fence, keys), input.result, ms('resultTtlMs', input.resultTtlMs), String(opts.inlineResultBytes)];
      return writeReply(await script('complete', fence, args, true, keys));
    },

    async fail(fence, input) {
      const { failure } = input;
      const keys = keysOf(fence);
      const args = [
        ...fenceArgs(fence, keys),
        failure.type,
        failure.code,
        failure.message.slice(0, MAX_ERROR_MESSAGE_LENGTH),
        failure.retryable ? '1' : '0',
        ms('ttlMs', input.ttlMs),
      ];
      return writeReply(await script('fail', fence, args, true, keys));
    },

    async cancel(ref, input) {
      if (input.epoch !== undefined && !Number.isSafeInteger(input.epoch)) {
        throw new FlightValidationError(`epoch must be an integer, got ${String(input.epoch)}`);
      }
      const keys = keysOf(ref);
      const args = [
        nowArg(),
        keys.channel,
        input.reason.slice(0, MAX_ERROR_MESSAGE_LENGTH),
        ms('ttlMs', input.ttlMs),
        input.epoch === undefined ? '' : String(input.epoch),
      ];
      const reply = await script('cancel', ref, args, true, keys);
      if (reply.code === 'OK' && reply.meta) return { ok: true, meta: reply.meta } satisfies CancelReply;
      const code = reply.code === 'EPOCH_MISMATCH' ? 'EPOCH_MISMATCH' : 'NOT_ACTIVE';
      return { ok: false, code, status: reply.meta?.status ?? null } satisfies CancelReply;
    },

    async expire(ref, input) {
      const keys = keysOf(ref);
      const reply = await script('expire', ref, [nowArg(), keys.channel, ms('ttlMs', input.ttlMs)], true, keys);
      if (reply.code === 'OK' && reply.meta) return { ok: true, meta: reply.meta } satisfies ExpireReply;
      return { ok: false, code: reply.code === 'NOT_DUE' ? 'NOT_DUE' : 'NOT_ACTIVE', status: reply.meta?.status ?? null } satisfies ExpireReply;
    },

    async forget(ref) {
      const reply = await script('forget', ref, [nowArg()], true, keysOf(ref));
      if (reply.code === 'OK' && reply.meta) return { ok: true, meta: reply.meta } satisfies ForgetReply;
      return { ok: false, code: 'NOT_FOUND', status: null } satisfies ForgetReply;
    },

    async readMeta(ref) {
      return (await read(ref, false)).meta;
    },

    async readResult(ref) {
      const reply = await read(ref, true);
      const { meta } = reply;
      return meta?.status === 'SUCCEEDED' && !transitions.isForgotten(meta) ? (reply.result ?? null) : null;
    },

    waitForTerminal(ref, options) {
      if (closed) return Promise.resolve(null);
      const keys = keysOf(ref);
      // A caller of this process joined the run by `acquire` (counted in `followers`): its notice is
      // published. Any other waiter marks the record watched when it re-reads it, so that it is.
      const joined = keys.followed?.epoch === options.epoch;
      const nonce = joined ? keys.followed!.nonce : undefined;
      const reread = joined
        ? (via?: ScriptRunner) => read(ref, true, via)
        : (via?: ScriptRunner) => script('watch', ref, [nowArg()], false, keys, via);
      return notifications.wait(ref, keys.channel, { ...options, nonce }, reread);
    },

    async close() {
      if (closed) return;
      closed = true;
      await notifications.close();
      await driver.close();
    },
  };
}

export type { FlightKeys };
