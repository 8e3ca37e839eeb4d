/**
 * The Redis coordinator, shared by both adapters: the Lua scripts behind core's `FlightCoordinator`
 * port, with deadlines, typed errors, payload checks and one multiplexed subscriber per coordinator.
 */
import {
  flightId,
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

/** A terminal notice as received: `tag epoch status`, then for inlined results ` <utf8 bytes> <result>`. */
interface Notice {
  epoch: number;
  status: FlightStatus;
  result: string | undefined;
}

/**
 * Taken by `acquire` before its command is sent, for the flight's tag: whether the subscription was
 * live then (and at which reconnect generation), and the newest notice of the tag received since.
 * A FOLLOWER_WAIT reply parks it for `waitForTerminal`, which then needs no re-read when the
 * subscription stayed up: every later terminal write is a notice on it, or recorded here.
 */
interface Ticket {
  tag: string;
  live: boolean;
  generation: number;
  notice: Notice | undefined;
  /** The epoch of the FOLLOWER_WAIT reply; -1 while the acquire is in flight. */
  epoch: number;
  parkedAt: number;
}

/** How long a FOLLOWER_WAIT ticket waits for its `waitForTerminal`; past it the waiter re-reads. */
const TICKET_TTL_MS = 5000;
/** At most this many parked tickets (oldest dropped first; a dropped one only costs its waiter a read). */
const MAX_PARKED_TICKETS = 10_000;

/** Flights whose keys are remembered (a digest each); the oldest is forgotten first. */
const KEY_CACHE_SIZE = 4096;

const STATUS_SET = new Set<string>(['PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED', 'EXPIRED']);

/** Parses a notice; a result whose byte count does not match is dropped (the follower reads it instead). */
export function parseNotice(message: string): (Notice & { tag: string }) | null {
  const a = message.indexOf(' ');
  if (a <= 0) return null;
  const b = message.indexOf(' ', a + 1);
  if (b < 0) return null;
  const c = message.indexOf(' ', b + 1);
  const tag = message.slice(0, a);
  const epoch = Number(message.slice(a + 1, b));
  const status = c < 0 ? message.slice(b + 1) : message.slice(b + 1, c);
  if (!Number.isSafeInteger(epoch) || !STATUS_SET.has(status)) return null;
  let result: string | undefined;
  if (c >= 0) {
    const d = message.indexOf(' ', c + 1);
    if (d > c + 1) {
      const bytes = Number(message.slice(c + 1, d));
      const text = message.slice(d + 1);
      if (Number.isSafeInteger(bytes) && Buffer.byteLength(text, 'utf8') === bytes) result = text;
    }
  }
  return { tag, epoch, status: status as FlightStatus, result };
}

const ACQUIRE_OUTCOMES = new Set<string>(['OWNER_NEW', 'OWNER_TAKEOVER', 'FOLLOWER_WAIT', 'REPLAY_SUCCESS', 'REPLAY_FAILURE']);

function toEvent(ref: FlightRef, status: FlightStatus, epoch: number, result?: string): TerminalEvent {
  const event: TerminalEvent = { stage: ref.stage, key: ref.key, status, epoch };
  if (result !== undefined && status === 'SUCCEEDED') event.result = result;
  return event;
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
  /** True once the subscription is confirmed; `generation` grows on every reconnect of the subscriber. */
  let subscribed = false;
  let generation = 0;
  /** Tickets per tag: acquires in flight and parked FOLLOWER_WAIT replies (see `Ticket`). */
  const tickets = new Map<string, Set<Ticket>>();
  /** Parked tickets in parking order, for expiry and the size bound. */
  const parked = new Set<Ticket>();
  let sweeper: ReturnType<typeof setInterval> | undefined;
  let closed = false;

  const nowArg = () => (opts.clock ? String(Math.trunc(opts.clock())) : '');

  /** Keys of recent flights: an owner's acquire, markRunning and complete hash the same ref once. */
  const keyCache = new Map<string, FlightKeys>();
  function keysOf(ref: FlightRef): FlightKeys {
    const id = flightId(ref);
    let keys = keyCache.get(id);
    if (!keys) {
      keys = flightKeys(opts.prefix, ref);
      if (keyCache.size >= KEY_CACHE_SIZE) keyCache.delete(keyCache.keys().next().value as string);
      keyCache.set(id, keys);
    }
    return keys;
  }

  /** Every Redis call goes through here: deadline + one error mapping. */
  async function call<T>(operation: string, ref: FlightRef | undefined, run: () => Promise<T>): Promise<T> {
    try {
      return await withDeadline(run(), opts.commandTimeoutMs);
    } catch (error) {
      throw toFlightRedisError(error, operation, ref ? { stage: ref.stage, key: ref.key } : {});
    }
  }

  async function script(
    name: LuaScriptName,
    ref: FlightRef,
    args: readonly string[],
    ownerWrite: boolean,
    keys: FlightKeys = keysOf(ref),
  ): Promise<ScriptReply> {
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
    const notice = parseNotice(message);
    if (!notice) return;
    const { tag, epoch } = notice;
    const pending = tickets.get(tag);
    if (pending) {
      for (const ticket of pending) if (!ticket.notice || ticket.notice.epoch < epoch) ticket.notice = notice;
    }
    const set = waiters.get(tag);
    if (!set) return;
    for (const waiter of [...set]) {
      if (epoch >= waiter.epoch) waiter.resolve(toEvent(waiter.ref, notice.status, epoch, notice.result));
    }
  }

  function dropTicket(ticket: Ticket): void {
    const set = tickets.get(ticket.tag);
    if (set?.delete(ticket) && set.size === 0) tickets.delete(ticket.tag);
    if (parked.delete(ticket) && parked.size === 0 && sweeper) {
      clearInterval(sweeper);
      sweeper = undefined;
    }
  }

  function sweepTickets(): void {
    const oldest = Date.now() - TICKET_TTL_MS;
    for (const ticket of parked) {
      if (ticket.parkedAt > oldest && parked.size <= MAX_PARKED_TICKETS) break;
      dropTicket(ticket);
    }
  }

  function park(ticket: Ticket, epoch: number): void {
    ticket.epoch = epoch;
    ticket.parkedAt = Date.now();
    parked.add(ticket);
    if (parked.size > MAX_PARKED_TICKETS) sweepTickets();
    if (!sweeper && parked.size > 0) {
      sweeper = setInterval(sweepTickets, 1000);
      sweeper.unref?.();
    }
  }

  /** The parked ticket of a FOLLOWER_WAIT reply for `epoch` on `tag`, removed from the buffer. */
  function takeTicket(tag: string, epoch: number): Ticket | undefined {
    const set = tickets.get(tag);
    if (!set) return undefined;
    for (const ticket of set) {
      if (ticket.epoch === epoch && parked.has(ticket)) {
        dropTicket(ticket);
        return ticket;
      }
    }
    return undefined;
  }

  /** Re-reads every waited flight: a notice may have been lost while the subscriber was away. */
  function recheckAll(): void {
    for (const set of waiters.values()) for (const waiter of set) void recheck(waiter);
  }

  async function recheck(waiter: Waiter): Promise<void> {
    try {
      // With the result: when it is already SUCCEEDED the waiter returns without reading it again.
      const { meta, result } = await script('read', waiter.ref, ['1'], false);
      if (meta && meta.epoch >= waiter.epoch && !isActive(meta.status)) waiter.resolve(toEvent(waiter.ref, meta.status, meta.epoch, result));
    } catch {
      // The waiter still resolves by its timeout; the caller polls.
    }
  }

  function ensureSubscribed(): Promise<RedisSubscription> {
    if (!subscription) {
      const onReconnect = () => {
        generation++;
        recheckAll();
      };
      const pending = withDeadline(driver.subscribe(channel, { onMessage: onNotice, onReconnect }), opts.commandTimeoutMs);
      subscription = pending;
      pending.then(
        () => {
          if (subscription === pending && !closed) subscribed = true;
        },
        () => {
          if (subscription === pending) subscription = undefined;
        },
      );
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
      const keys = keysOf(input);
      // Taken before the command is sent: see `Ticket`.
      const ticket: Ticket = { tag: keys.tag, live: subscribed, generation, notice: undefined, epoch: -1, parkedAt: 0 };
      let set = tickets.get(keys.tag);
      if (!set) tickets.set(keys.tag, (set = new Set()));
      set.add(ticket);
      let reply: ScriptReply;
      try {
        reply = await script('acquire', input, args, true, keys);
      } catch (error) {
        dropTicket(ticket);
        throw error;
      }
      if (reply.code === 'FOLLOWER_WAIT' && reply.meta && !closed) park(ticket, reply.meta.epoch);
      else dropTicket(ticket);
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
      const args = [...fenceArgs(fence), input.result, ms('resultTtlMs', input.resultTtlMs), String(opts.inlineResultBytes)];
      return writeReply(await script('complete', fence, args, true));
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
        const tag = keysOf(ref).tag;
        const ticket = takeTicket(tag, epoch);
        const early = ticket?.notice;
        if (early && early.epoch >= epoch) return resolve(toEvent(ref, early.status, early.epoch, early.result));
        // The subscription was live before the acquire that saw this epoch active, and never broke since:
        // the terminal write comes later, as a notice (or a reconnect re-reads every waiter).
        const covered = !!ticket && ticket.live && subscribed && ticket.generation === generation;
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
        if (covered) return;
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
      subscribed = false;
      for (const set of [...waiters.values()]) for (const waiter of [...set]) waiter.resolve(null);
      waiters.clear();
      for (const ticket of [...parked]) dropTicket(ticket);
      tickets.clear();
      if (sweeper) clearInterval(sweeper);
      sweeper = undefined;
      const sub = subscription;
      subscription = undefined;
      if (sub) await sub.then((s) => s.close()).catch(() => undefined);
      await driver.close();
    },
  };
}

export type { FlightKeys };
