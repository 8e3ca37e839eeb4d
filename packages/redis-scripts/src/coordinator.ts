/**
 * The Redis coordinator, shared by both adapters: the Lua scripts behind core's `FlightCoordinator`
 * port, wired here from four rooms.
 * - spine/: the canonical path — the scripts (lua/, generated into lua.generated.ts), how they are run
 *   (script-calls.ts: deadline, version check, errors; script-args.ts: checked arguments), their replies
 *   as core's types (reply.ts, write-replies.ts), the acquire (acquire-path.ts) and the owner's writes
 *   (owner-writes.ts). The record layout has one home, record-layout.ts.
 * - fast-paths/: plain commands that stand in for a script when they can decide as it would (fast-path.ts
 *   is their contract), chosen in choose.ts from the client's and the server's capabilities.
 * - wake-up/: follower wake-up (notifications.ts over one subscriber) and the runs a follower joined.
 * - streams/: the streaming extension.
 */
// InspectableCoordinator comes from core's adapter entry: the adapters' public types then never import its
// testing entry (and the optional test libraries behind it).
import { FlightValidationError } from '@flight/core';
import { transitions, type InspectableCoordinator, type StreamingFlightCoordinator } from '@flight/core/adapter';
import { AcquirePath } from './spine/acquire-path';
import type { RedisDriver, ScriptRunner } from './driver';
import { chooseFastPaths } from './fast-paths/choose';
import { createFlightKeysOf } from './flight-keys-of';
import { createFollowedRuns } from './wake-up/followed-runs';
import { createJoinPredictor } from './fast-paths/join-predictor';
import { createNotifications, type NotificationCounters } from './wake-up/notifications';
import { resolveRedisOptions, type RedisCoordinatorOptions } from './options';
import { createOwnerWrites, ownerWriter } from './spine/owner-writes';
import { checkEpoch, MAX_ERROR_MESSAGE_LENGTH, ms } from './spine/script-args';
import { createScriptCalls } from './spine/script-calls';
import { createServerClocks } from './fast-paths/server-clock';
import { createRedisStreams } from './streams/streams';
import { cancelReply, expireReply, forgetReply } from './spine/write-replies';

export { SUBSCRIBE_FIRST_WAIT_MS } from './spine/acquire-path';

export interface RedisCoordinator extends StreamingFlightCoordinator, InspectableCoordinator {
  /** Followers currently waiting on this coordinator (all share one subscriber connection). */
  readonly waiting: number;
  /** Wake-up counters of this coordinator's subscriber (live values). */
  readonly notifications: NotificationCounters;
}

export function createRedisCoordinator(driver: RedisDriver, options: RedisCoordinatorOptions = {}): RedisCoordinator {
  const opts = resolveRedisOptions(options);
  if (opts.waitReplicas && !driver.waitReplicas) {
    throw new FlightValidationError('waitReplicas is not supported by this client');
  }
  const notifications = createNotifications(driver, { commandTimeoutMs: opts.commandTimeoutMs, clock: opts.localClock });
  const keysOf = createFlightKeysOf(opts.prefix, driver.db);
  const calls = createScriptCalls(driver, opts, keysOf);
  const { call, script, read, nowArg, fenceArgs } = calls;
  const serverClocks = createServerClocks();
  const clockOf = driver.clockOf?.bind(driver);
  /** The clock of the server that holds `key` (one on a standalone server); undefined while unknown. */
  const serverClock = (key: string) => {
    const server = clockOf ? clockOf(key) : '';
    return server === undefined ? undefined : serverClocks.of(server);
  };
  const predictor = createJoinPredictor();
  const fastPaths = chooseFastPaths(driver, opts, { calls, serverClocks, serverClock, predictor });
  let closed = false;
  const getBuffer = driver.getBuffer?.bind(driver);
  const followedRuns = createFollowedRuns();
  const ownerWrite = ownerWriter(calls, serverClocks, serverClock);
  const ownerWrites = createOwnerWrites({
    opts,
    calls,
    keysOf,
    ownerWrite,
    untouched: fastPaths.complete,
    storesBytes: getBuffer !== undefined,
  });
  const acquirePath = new AcquirePath({
    opts,
    calls,
    fast: fastPaths.acquire,
    notifications,
    followedRuns,
    predictor,
    serverClocks,
    serverClock,
    getBuffer,
    ownerWrite,
    closed: () => closed,
  });

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
      return acquirePath.acquire(input, keysOf(input), 0);
    },

    ...ownerWrites,

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
      return (await acquirePath.storedResult(ref, keysOf(ref), meta.epoch, result)) ?? null;
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
