/**
 * The Redis coordinator, shared by both adapters: the Lua scripts behind core's `FlightCoordinator`
 * port, with deadlines, typed errors, payload checks and one multiplexed subscriber per coordinator.
 */
import {
  FlightResultTooLargeError,
  FlightValidationError,
  isActive,
  type AcquireReply,
  type CancelReply,
  type ExpireReply,
  type FlightCoordinator,
  type FlightMeta,
  type FlightRef,
  type FlightStatus,
  type TerminalEvent,
  type WriteReply,
  type Fence,
  type AcquireOutcome,
} from '@flight/core';
import type { RedisDriver, RedisSubscription } from './driver';
import { toFlightRedisError, withDeadline } from './errors';
import { eventChannel, flightKeys, type FlightKeys } from './keys';
import type { LuaScriptName } from './lua.generated';
import { resolveRedisOptions, type RedisCoordinatorOptions } from './options';
import { decodeReply, type ScriptReply } from './reply';
import { runScript } from './scripts';

/** Longest failure message stored with a FAILED flight; longer ones are cut. */
export const MAX_ERROR_MESSAGE_LENGTH = 4096;

export interface RedisCoordinator extends FlightCoordinator {
  /** Followers currently waiting on this coordinator (all share one subscriber connection). */
  readonly waiting: number;
}

interface Waiter {
  ref: FlightRef;
  epoch: number;
  resolve: (event: TerminalEvent | null) => void;
}

const ACQUIRE_OUTCOMES = new Set<string>(['OWNER_NEW', 'OWNER_TAKEOVER', 'FOLLOWER_WAIT', 'REPLAY_SUCCESS', 'REPLAY_FAILURE']);

function toEvent(ref: FlightRef, status: FlightStatus, epoch: number): TerminalEvent {
  return { stage: ref.stage, key: ref.key, status, epoch };
}

export function createRedisCoordinator(driver: RedisDriver, options: RedisCoordinatorOptions = {}): RedisCoordinator {
  const opts = resolveRedisOptions(options);
  if (opts.waitReplicas && !driver.waitReplicas) {
    throw new FlightValidationError('waitReplicas is not supported by this client');
  }
  const channel = eventChannel(opts.prefix);
  const waiters = new Map<string, Set<Waiter>>();
  let waitingCount = 0;
  let subscription: Promise<RedisSubscription> | undefined;
  let closed = false;

  const nowArg = () => (opts.clock ? String(Math.trunc(opts.clock())) : '');

  /** Every Redis call goes through here: deadline + one error mapping. */
  async function call<T>(operation: string, ref: FlightRef | undefined, run: () => Promise<T>): Promise<T> {
    try {
      return await withDeadline(run(), opts.commandTimeoutMs);
    } catch (error) {
      throw toFlightRedisError(error, operation, ref ? { stage: ref.stage, key: ref.key } : {});
    }
  }

  async function script(name: LuaScriptName, ref: FlightRef, args: readonly string[], ownerWrite: boolean): Promise<ScriptReply> {
    const keys = flightKeys(opts.prefix, ref);
    return call(name, ref, async () => {
      const reply = decodeReply(
        await runScript(driver, name, [keys.meta, keys.result, keys.events], [nowArg(), channel, keys.tag, ...args]),
      );
      if (ownerWrite && opts.waitReplicas && driver.waitReplicas) {
        await driver.waitReplicas(keys.meta, opts.waitReplicas.replicas, opts.waitReplicas.timeoutMs);
      }
      return reply;
    });
  }

  const fenceArgs = (fence: Fence) => [fence.ownerId, fence.ownerToken, String(fence.epoch)];

  function writeReply(reply: ScriptReply): WriteReply {
    if (reply.code === 'OK' && reply.meta) return { ok: true, meta: reply.meta };
    return { ok: false, code: 'FENCED', status: reply.meta?.status ?? null, epoch: reply.meta?.epoch ?? null };
  }

  function ms(name: string, value: number): string {
    if (!Number.isFinite(value) || value < 0) throw new FlightValidationError(`${name} must be a non-negative number, got ${value}`);
    return String(Math.trunc(value));
  }

  // ---- notifications: one subscriber connection, a map from flight tag to its waiters ----

  function onNotice(message: string): void {
    const [tag, epochText, status] = message.split(' ');
    if (!tag || !epochText || !status) return;
    const set = waiters.get(tag);
    if (!set) return;
    const epoch = Number(epochText);
    for (const waiter of [...set]) {
      if (epoch >= waiter.epoch) waiter.resolve(toEvent(waiter.ref, status as FlightStatus, epoch));
    }
  }

  /** Re-reads every waited flight: a notice may have been lost while the subscriber was away. */
  function recheckAll(): void {
    for (const set of waiters.values()) for (const waiter of set) void recheck(waiter);
  }

  async function recheck(waiter: Waiter): Promise<void> {
    try {
      const meta = await readMetaOf(waiter.ref);
      if (meta && meta.epoch >= waiter.epoch && !isActive(meta.status)) waiter.resolve(toEvent(waiter.ref, meta.status, meta.epoch));
    } catch {
      // The waiter still resolves by its timeout; the caller polls.
    }
  }

  function ensureSubscribed(): Promise<RedisSubscription> {
    if (!subscription) {
      const pending = withDeadline(driver.subscribe(channel, { onMessage: onNotice, onReconnect: recheckAll }), opts.commandTimeoutMs);
      subscription = pending;
      pending.catch(() => {
        if (subscription === pending) subscription = undefined;
      });
    }
    return subscription;
  }

  async function readMetaOf(ref: FlightRef): Promise<FlightMeta | null> {
    return (await script('read', ref, ['0'], false)).meta;
  }

  return {
    get waiting() {
      return waitingCount;
    },

    async acquire(input) {
      const args = [
        input.stage,
        input.key,
        input.sessionId === undefined ? '0' : '1',
        input.sessionId ?? '',
        input.ownerId,
        input.ownerToken,
        input.joinEpoch === undefined ? '' : String(input.joinEpoch),
        ms('takeoverAfterMs', input.takeoverAfterMs),
        ms('leaseTtlMs', input.leaseTtlMs),
        ms('maxRunMs', input.maxRunMs),
      ];
      const reply = await script('acquire', input, args, true);
      if (!ACQUIRE_OUTCOMES.has(reply.code) || !reply.meta) throw toFlightRedisError(new Error(`unexpected acquire reply ${reply.code}`), 'acquire', { stage: input.stage, key: input.key });
      const out: AcquireReply = { outcome: reply.code as AcquireOutcome, meta: reply.meta };
      if (reply.code === 'REPLAY_SUCCESS') out.result = reply.result;
      return out;
    },

    async markRunning(fence, lease) {
      return writeReply(await script('markRunning', fence, [...fenceArgs(fence), ms('leaseTtlMs', lease.leaseTtlMs)], false));
    },

    async heartbeat(fence, lease) {
      return writeReply(await script('heartbeat', fence, [...fenceArgs(fence), ms('leaseTtlMs', lease.leaseTtlMs)], false));
    },

    async complete(fence, input) {
      if (typeof input.result !== 'string') throw new FlightValidationError('result must be a string');
      const bytes = Buffer.byteLength(input.result, 'utf8');
      if (bytes > opts.maxPayloadBytes) {
        throw new FlightResultTooLargeError(`result of ${bytes} bytes exceeds maxPayloadBytes (${opts.maxPayloadBytes})`, {
          context: { stage: fence.stage, key: fence.key, bytes },
        });
      }
      return writeReply(await script('complete', fence, [...fenceArgs(fence), input.result, ms('resultTtlMs', input.resultTtlMs)], true));
    },

    async fail(fence, input) {
      const { failure } = input;
      const args = [
        ...fenceArgs(fence),
        failure.type,
        failure.code,
        failure.message.slice(0, MAX_ERROR_MESSAGE_LENGTH),
        failure.retryable ? '1' : '0',
        ms('ttlMs', input.ttlMs),
      ];
      return writeReply(await script('fail', fence, args, true));
    },

    async cancel(ref, input) {
      const reply = await script('cancel', ref, [input.reason.slice(0, MAX_ERROR_MESSAGE_LENGTH), ms('ttlMs', input.ttlMs)], true);
      if (reply.code === 'OK' && reply.meta) return { ok: true, meta: reply.meta } satisfies CancelReply;
      return { ok: false, code: 'NOT_ACTIVE', status: reply.meta?.status ?? null } satisfies CancelReply;
    },

    async expire(ref, input) {
      const reply = await script('expire', ref, [ms('ttlMs', input.ttlMs)], true);
      if (reply.code === 'OK' && reply.meta) return { ok: true, meta: reply.meta } satisfies ExpireReply;
      return { ok: false, code: reply.code === 'NOT_DUE' ? 'NOT_DUE' : 'NOT_ACTIVE', status: reply.meta?.status ?? null } satisfies ExpireReply;
    },

    readMeta: readMetaOf,

    async readResult(ref) {
      const reply = await script('read', ref, ['1'], false);
      return reply.meta?.status === 'SUCCEEDED' ? (reply.result ?? null) : null;
    },

    waitForTerminal(ref, { epoch, timeoutMs, signal }) {
      return new Promise<TerminalEvent | null>((resolve) => {
        if (closed || signal?.aborted) return resolve(null);
        const tag = flightKeys(opts.prefix, ref).tag;
        let set = waiters.get(tag);
        if (!set) waiters.set(tag, (set = new Set()));
        const bucket = set;
        let settled = false;
        const waiter: Waiter = {
          ref,
          epoch,
          resolve(event) {
            if (settled) return;
            settled = true;
            clearTimeout(timer);
            signal?.removeEventListener('abort', onAbort);
            bucket.delete(waiter);
            waitingCount--;
            if (bucket.size === 0 && waiters.get(tag) === bucket) waiters.delete(tag);
            resolve(event);
          },
        };
        const onAbort = () => waiter.resolve(null);
        const timer = setTimeout(onAbort, Math.max(0, timeoutMs));
        timer.unref?.();
        signal?.addEventListener('abort', onAbort, { once: true });
        bucket.add(waiter);
        waitingCount++;
        // Subscribe first, then read: a terminal write that landed between the caller's acquire and this
        // subscription is seen by the read; one after it is seen as a notice.
        ensureSubscribed().then(
          () => recheck(waiter),
          () => recheck(waiter),
        );
      });
    },

    async close() {
      if (closed) return;
      closed = true;
      for (const set of [...waiters.values()]) for (const waiter of [...set]) waiter.resolve(null);
      waiters.clear();
      const sub = subscription;
      subscription = undefined;
      if (sub) await sub.then((s) => s.close()).catch(() => undefined);
      await driver.close();
    },
  };
}

export type { FlightKeys };
