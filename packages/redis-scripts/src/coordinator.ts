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
import type { RedisDriver } from './driver';
import { chooseFastPaths } from './fast-paths/choose';
import { createFlightKeysOf } from './flight-keys-of';
import { createFollowedRuns } from './wake-up/followed-runs';
import { createJoinPredictor } from './fast-paths/join-predictor';
import { createNotifications, type NotificationCounters } from './wake-up/notifications';
import { resolveRedisOptions, type RedisCoordinatorOptions } from './options';
import { createOwnerWrites, ownerWriter } from './spine/owner-writes';
import { ms } from './spine/script-args';
import { createScriptCalls } from './spine/script-calls';
import { createServerClocks, serverClockOf } from './fast-paths/server-clock';
import { createRedisStreams } from './streams/streams';
import { createRunControl } from './spine/run-control';
import { createInspector, type Inspector } from './inspect/inspector';
import { createTerminalWait } from './wake-up/terminal-wait';
import { createWaitingNodes } from './wake-up/waiting-nodes';
import { decodeStaleCopy } from './spine/reply';
import { runScript } from './spine/scripts';

export { SUBSCRIBE_FIRST_WAIT_MS } from './spine/acquire-path';

export interface RedisCoordinator extends StreamingFlightCoordinator, InspectableCoordinator, Inspector {
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
  let closed = false;
  const isClosed = () => closed;
  const notifications = createNotifications(driver, { commandTimeoutMs: opts.commandTimeoutMs, clock: opts.localClock });
  const keysOf = createFlightKeysOf(opts.prefix, driver.db);
  const calls = createScriptCalls(driver, opts, keysOf);
  const serverClocks = createServerClocks();
  const serverClock = serverClockOf(driver, serverClocks);
  const predictor = createJoinPredictor();
  const fastPaths = chooseFastPaths(driver, opts, { calls, serverClocks, serverClock, predictor });
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
    ownerWrites,
    closed: isClosed,
  });
  const streams = createRedisStreams({
    driver,
    prefix: opts.prefix,
    notifications,
    keysOf,
    call: calls.call,
    nowArg: calls.nowArg,
    fenceArgs: calls.fenceArgs,
    ms,
    inlineBytes: opts.inlineResultBytes,
  });

  return {
    ...streams,
    ...ownerWrites,
    ...createRunControl(calls, keysOf),
    ...createInspector(driver, opts.prefix, keysOf),
    storesBytes: getBuffer !== undefined,
    keepsStaleCopies: true,
    async readStale(ref) {
      const stored = await calls.call('staleRead', ref, () => runScript(driver, 'staleRead', [keysOf(ref).stale], []));
      const copy =
        typeof stored === 'string' ? decodeStaleCopy(stored) : Buffer.isBuffer(stored) ? decodeStaleCopy(stored.toString('utf8')) : null;
      const now = opts.clock ? opts.clock() : Date.now();
      return copy && transitions.isStaleLive(copy, now) ? copy : null;
    },
    get waiting() {
      return notifications.waiting;
    },
    get notifications() {
      return notifications.counters;
    },
    acquire: (input) => acquirePath.acquire(input, keysOf(input), 0),
    listenForgets: (ref, listener) => notifications.listenForgets(keysOf(ref).channel, listener),
    waitingNodes: createWaitingNodes(driver, calls, keysOf, notifications),
    readMeta: async (ref) => (await calls.read(ref, false)).meta,
    async readResult(ref) {
      const { meta, result } = await calls.read(ref, true);
      if (meta?.status !== 'SUCCEEDED' || transitions.isForgotten(meta)) return null;
      return (await acquirePath.storedResult(ref, keysOf(ref), meta.epoch, result)) ?? null;
    },
    waitForTerminal: createTerminalWait({ calls, keysOf, followedRuns, notifications, closed: isClosed }),
    async close() {
      if (closed) return;
      closed = true;
      await notifications.close();
      await driver.close();
    },
  };
}
