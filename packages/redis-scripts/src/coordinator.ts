/**
 * The Redis coordinator, shared by both adapters: the Lua scripts behind core's `FlightCoordinator`
 * port. Its parts: script-calls.ts (deadline, version check, errors), script-args.ts (checked
 * arguments), write-replies.ts (replies as core's types), flight-keys-of.ts (a flight's keys, derived once per call), followed-runs.ts (the runs a follower joined),
 * notifications.ts (follower wake-up) and streams.ts (the streaming extension).
 */
// InspectableCoordinator comes from core's main entry: the adapters' public types then never import its
// testing entry (and the optional test libraries behind it).
import { FlightCoordinationError, FlightValidationError } from '@flight/core';
import {
  transitions,
  type AcquireInput,
  type AcquireReply,
  type InspectableCoordinator,
  type Fence,
  type FlightRef,
  type StoredResult,
  type StreamingFlightCoordinator,
} from '@flight/core/adapter';
import type { RedisDriver, ScriptArg, ScriptRunner } from './driver';
import { createFlightKeysOf, type RunKeys } from './flight-keys-of';
import { createFollowedRuns } from './followed-runs';
import { createNotifications, type NotificationCounters } from './notifications';
import { resolveRedisOptions, type RedisCoordinatorOptions } from './options';
import type { LuaScriptName } from './lua.generated';
import { isBytesResult, resultBytesOf, type ScriptReply } from './reply';
import { acquireArgs, checkEpoch, checkResultSize, MAX_ERROR_MESSAGE_LENGTH, ms } from './script-args';
import { createScriptCalls } from './script-calls';
import { createFastAcquire, FAST_ACQUIRE_SLACK_MS } from './fast-acquire';
import { createUntouchedComplete } from './untouched-complete';
import { createCompareAndSet } from './compare-and-set';
import { createJoinPredictor } from './join-predictor';
import { createServerClocks, recordNow } from './server-clock';
import { createRedisStreams } from './streams';
import { acquireReply, cancelReply, expireReply, forgetReply } from './write-replies';

export interface RedisCoordinator extends StreamingFlightCoordinator, InspectableCoordinator {
  /** Followers currently waiting on this coordinator (all share one subscriber connection). */
  readonly waiting: number;
  /** Wake-up counters of this coordinator's subscriber (live values). */
  readonly notifications: NotificationCounters;
}

/**
 * How long a herd's follower waits for its channel's subscription before it sends its acquire anyway
 * (its wait then re-reads the flight once the subscription is confirmed, as any other).
 */
export const SUBSCRIBE_FIRST_WAIT_MS = 250;

/** How late a fast acquire's reply may come back before its run is confirmed (ms; see `confirmLateOwner`). */
function lateAfterMs(input: AcquireInput): number {
  return Math.min(FAST_ACQUIRE_SLACK_MS, input.takeoverAfterMs / 3);
}

export function createRedisCoordinator(driver: RedisDriver, options: RedisCoordinatorOptions = {}): RedisCoordinator {
  const opts = resolveRedisOptions(options);
  if (opts.waitReplicas && !driver.waitReplicas) {
    throw new FlightValidationError('waitReplicas is not supported by this client');
  }
  const notifications = createNotifications(driver, { commandTimeoutMs: opts.commandTimeoutMs, clock: opts.localClock });
  const keysOf = createFlightKeysOf(opts.prefix, driver.db);
  const followedRuns = createFollowedRuns();
  const calls = createScriptCalls(driver, opts, keysOf);
  const { call, script, read, nowArg, fenceArgs } = calls;
  const serverClocks = createServerClocks();
  const clockOf = driver.clockOf?.bind(driver);
  /** The clock of the server that holds `key` (one on a standalone server); undefined while unknown. */
  const serverClock = (key: string) => {
    const server = clockOf ? clockOf(key) : '';
    return server === undefined ? undefined : serverClocks.of(server);
  };
  const setIfAbsent = driver.setIfAbsent?.bind(driver);
  // WAIT after an owner write is the scripts' (script-calls.ts): with waitReplicas every acquire is one.
  const predictor = createJoinPredictor();
  const fast =
    setIfAbsent && !opts.waitReplicas ? createFastAcquire({ setIfAbsent, serverClock, testClock: opts.clock, predictor }) : undefined;
  const setIfEqual = driver.setIfEqual?.bind(driver);
  // Only runs the fast acquire created are untouched (so never with waitReplicas: see above).
  const untouched =
    fast && setIfEqual
      ? createUntouchedComplete({
          compareAndSet: createCompareAndSet(setIfEqual, driver),
          serverClock,
          testClock: opts.clock,
          sent: calls.sent,
          mark: () => serverClocks.mark(),
        })
      : undefined;
  /**
   * Runs an owner write. An accepted one samples the clock of the server holding the key: its record's
   * `updatedAt` is that server's now (unless the reply took too long to be read: server-clock.ts).
   */
  const ownerWrite = async (name: LuaScriptName, fence: Fence, args: readonly ScriptArg[], waits: boolean, keys: RunKeys) => {
    keys.untouched = undefined; // the record changes, or the write is refused: either way not as written
    const sentAt = serverClocks.mark();
    const { reply, updatedAt } = await calls.write(name, fence, args, waits, keys);
    if (updatedAt !== undefined) serverClock(keys.meta)?.sample(updatedAt, sentAt);
    return reply;
  };
  let closed = false;
  const getBuffer = driver.getBuffer?.bind(driver);

  /**
   * A result as stored: a reply's text, or — for a result stored as bytes (`isBytesResult`) — the flight's
   * key read again as bytes, when it still holds run `epoch`'s result (undefined when it holds anything
   * else by now).
   */
  async function storedResult(ref: FlightRef, keys: RunKeys, epoch: number, result: string | undefined): Promise<StoredResult | undefined> {
    if (!isBytesResult(result) || !getBuffer) return result;
    const stored = await call('read', ref, () => getBuffer(keys.meta));
    return stored === null ? undefined : resultBytesOf(stored, epoch);
  }

  /**
   * The acquire reply handed to core: `out`, with `keys` as its handle (see flight-keys-of.ts); for the
   * replay of a result stored as bytes, with that result read as bytes (a new run replacing it meanwhile,
   * forgotten or expired between the two reads, is asked about again). Synchronous unless it reads.
   */
  function finishedReply(input: AcquireInput, keys: RunKeys, out: AcquireReply, attempt: number): AcquireReply | Promise<AcquireReply> {
    out.handle = keys;
    if (out.outcome !== 'REPLAY_SUCCESS') return out;
    // By the clock of the server that holds the result (just sampled when a script answered).
    const now = recordNow(opts.clock, serverClock, keys.meta);
    if (now !== undefined) out.storedForMs = out.meta.expireAt - now;
    if (!isBytesResult(out.result)) return out;
    return storedResult(input, keys, out.meta.epoch, out.result).then((result) => {
      if (result !== undefined) return { ...out, result };
      if (attempt === 2) {
        throw new FlightCoordinationError('the stored result kept changing while it was read', {
          context: { stage: input.stage, key: input.key },
        });
      }
      return acquire(input, keys, attempt + 1);
    });
  }

  /** `acquire`: the fast path when it decides, else the script; a result stored as bytes read back as bytes. */
  async function acquire(input: AcquireInput, keys: RunKeys, attempt: number): Promise<AcquireReply> {
    if (calls.checked && fast) {
      const sentAt = serverClocks.mark();
      const quick = fast.attempt(input, keys);
      const decided = quick && (await calls.sent('acquire', input, quick));
      if (decided && decided.outcome === 'OWNER_NEW' && !opts.clock && serverClocks.mark() - sentAt > lateAfterMs(input)) {
        return confirmLateOwner(input, keys, decided, attempt);
      }
      if (decided) return finishedReply(input, keys, decided, attempt);
    }
    return scriptAcquire(input, keys, attempt);
  }

  /**
   * A reply to the fast acquire's SET that came back late: the SET may have run late too, and its record,
   * stamped when it was sent, may have landed stale (another caller may have taken it over already), past its
   * lease, or with an epoch not above an earlier run's (FAST_ACQUIRE_SLACK_MS). Before its run starts, the
   * run is confirmed by the server clock: markRunning renews its lease and restamps it (fast-acquire.ts).
   * Refused, the run is not this caller's: it asks again through the script, and follows whoever holds it.
   */
  async function confirmLateOwner(input: AcquireInput, keys: RunKeys, decided: AcquireReply, attempt: number): Promise<AcquireReply> {
    const fence: Fence = {
      stage: input.stage,
      key: input.key,
      ownerId: input.ownerId,
      ownerToken: input.ownerToken,
      epoch: decided.meta.epoch,
    };
    const confirmed = await ownerWrite(
      'markRunning',
      fence,
      [...fenceArgs(fence, keys), ms('leaseTtlMs', input.leaseTtlMs), '1'],
      false,
      keys,
    );
    if (confirmed.ok) return finishedReply(input, keys, { outcome: 'OWNER_NEW', meta: confirmed.meta }, attempt);
    return scriptAcquire(input, keys, attempt);
  }

  /** The acquire script (the rules on the server clock), with its subscribe-first ticket. */
  async function scriptAcquire(input: AcquireInput, keys: RunKeys, attempt: number): Promise<AcquireReply> {
    const args = acquireArgs(nowArg(), input);
    // Taken before the command is sent: see `Ticket` in notifications.ts. A herd's follower subscribes
    // first, so that its wait needs no re-read (join-predictor.ts).
    const ticket =
      input.joinEpoch === undefined && calls.checked && predictor.joins(input.stage)
        ? await notifications.prepareAcquire(keys.channel, Math.min(opts.commandTimeoutMs, SUBSCRIBE_FIRST_WAIT_MS))
        : notifications.beginAcquire(keys.channel);
    let reply: ScriptReply;
    const sentAt = serverClocks.mark();
    try {
      reply = await script('acquire', input, args, true, keys);
    } catch (error) {
      if (ticket) notifications.endAcquire(ticket, null);
      throw error;
    }
    if (ticket) notifications.endAcquire(ticket, reply.code === 'FOLLOWER_WAIT' && !closed ? reply.meta : null);
    if (reply.code === 'FOLLOWER_WAIT' && reply.meta) followedRuns.joined(keys.meta, { epoch: reply.meta.epoch, nonce: reply.meta.nonce });
    if (reply.serverNow) serverClock(keys.meta)?.sample(reply.serverNow, sentAt);
    const out = acquireReply(reply, input);
    predictor.learn(input.stage, out.outcome);
    return finishedReply(input, keys, out, attempt);
  }

  return {
    ...createRedisStreams({
      driver,
      prefix: opts.prefix,
      notifications,
      keysOf,
      call,
      nowArg,
      fenceArgs,
      ms,
      inlineBytes: opts.inlineResultBytes,
    }),

    get waiting() {
      return notifications.waiting;
    },

    get notifications() {
      return notifications.counters;
    },

    storesBytes: getBuffer !== undefined,

    acquire(input) {
      return acquire(input, keysOf(input), 0);
    },

    async markRunning(fence, lease) {
      const keys = keysOf(fence);
      return ownerWrite('markRunning', fence, [...fenceArgs(fence, keys), ms('leaseTtlMs', lease.leaseTtlMs)], false, keys);
    },

    async heartbeat(fence, lease) {
      const keys = keysOf(fence);
      return ownerWrite('heartbeat', fence, [...fenceArgs(fence, keys), ms('leaseTtlMs', lease.leaseTtlMs)], false, keys);
    },

    async complete(fence, input) {
      const { result } = input;
      checkResultSize(result, opts.maxPayloadBytes, fence);
      const keys = keysOf(fence);
      // Bytes never ride in a notice (its text would carry them damaged): followers read them.
      const bytes = typeof result !== 'string';
      if (bytes && !getBuffer) throw new FlightValidationError('this coordinator stores text results only (storesBytes is false)');
      const ttlMs = ms('resultTtlMs', input.resultTtlMs);
      // A TTL the script would refuse is refused by it, with its error.
      const plain = ttlMs === '0' ? undefined : untouched?.attempt(fence, keys, result, Number(ttlMs));
      if (plain) {
        const reply = await plain;
        if (reply) return reply;
      }
      const args = [
        ...fenceArgs(fence, keys),
        bytes ? Buffer.from(result.buffer, result.byteOffset, result.byteLength) : result,
        ttlMs,
        bytes ? '0' : String(opts.inlineResultBytes),
      ];
      return ownerWrite('complete', fence, args, true, keys);
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
      return ownerWrite('fail', fence, args, true, keys);
    },

    async cancel(ref, input) {
      checkEpoch(input.epoch);
      const keys = keysOf(ref);
      const args = [
        nowArg(),
        keys.channel,
        input.reason.slice(0, MAX_ERROR_MESSAGE_LENGTH),
        ms('ttlMs', input.ttlMs),
        input.epoch === undefined ? '' : String(input.epoch),
      ];
      return cancelReply(await script('cancel', ref, args, true, keys));
    },

    async expire(ref, input) {
      const keys = keysOf(ref);
      return expireReply(await script('expire', ref, [nowArg(), keys.channel, ms('ttlMs', input.ttlMs)], true, keys));
    },

    async forget(ref) {
      const keys = keysOf(ref);
      return forgetReply(await script('forget', ref, [nowArg(), keys.channel], true, keys));
    },

    listenForgets(ref, listener) {
      return notifications.listenForgets(keysOf(ref).channel, listener);
    },

    async readMeta(ref) {
      return (await read(ref, false)).meta;
    },

    async readResult(ref) {
      const { meta, result } = await read(ref, true);
      if (meta?.status !== 'SUCCEEDED' || transitions.isForgotten(meta)) return null;
      return (await storedResult(ref, keysOf(ref), meta.epoch, result)) ?? null;
    },

    waitForTerminal(ref, options) {
      if (closed) return Promise.resolve(null);
      const keys = keysOf(ref, options.handle);
      // A caller of this process joined the run by `acquire` (counted in `followers`): its notice is
      // published. Any other waiter marks the record watched when it re-reads it, so that it is.
      const followed = followedRuns.of(keys.meta);
      const joined = followed?.epoch === options.epoch;
      const nonce = joined ? followed!.nonce : undefined;
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
