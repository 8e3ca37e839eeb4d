/**
 * Follower wake-up, in one place: a channel per flight (its hash tag + the DB index, see `noticeChannel`)
 * subscribed on the coordinator's ONE subscriber (one connection; one per shard on a cluster) only while
 * this process has waiters on it — reference-counted, SSUBSCRIBE/SUNSUBSCRIBE batched per tick.
 *
 * A wait is covered by the subscription only once the server confirmed it; then the flight is re-read
 * once (a terminal write between the follower's acquire and the confirmation is seen by that read, a
 * later one arrives as a notice). The subscriber is never replaced: a subscribe that misses its deadline
 * leaves the waiter to its polling safety net, and a late confirmation is used (or undone) when it comes.
 * A notice wakes a waiter only when it proves it belongs to the run the waiter joined (same epoch and
 * nonce; a newer epoch only wakes it to ask again, without its result).
 */
import type { Clock } from '@flight/core';
import type { FlightMeta, FlightRef, FlightStatus, ForgetListener, TerminalEvent, TimerHandle } from '@flight/core/adapter';
import type { RedisDriver, RedisSubscriber, ScriptRunner } from './driver';
import { withDeadline } from './errors';
import { isBytesResult } from './reply';

/** A terminal notice as published by the scripts: `nonce epoch status`, then for inlined results ` <bytes> <result>`. */
export interface Notice {
  nonce: string;
  epoch: number;
  status: FlightStatus;
  result: string | undefined;
}

/** What the bench and operators read: see `RedisCoordinator.notifications`. */
export interface NotificationCounters {
  /** Notices delivered to this process. */
  readonly received: number;
  /** Notices for a flight with no waiter (nor acquire in flight) here. */
  readonly foreign: number;
  /** Payload bytes of the notices received (UTF-8). */
  readonly bytes: number;
  /** Channels currently subscribed (confirmed). */
  readonly channels: number;
}

const STATUS_SET = new Set<string>(['PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED', 'EXPIRED']);

/** Parses a notice; a result whose byte count does not match is dropped (the follower reads it instead). */
export function parseNotice(message: string): Notice | null {
  const a = message.indexOf(' ');
  if (a < 0) return null;
  const b = message.indexOf(' ', a + 1);
  if (b < 0) return null;
  const c = message.indexOf(' ', b + 1);
  const nonce = message.slice(0, a);
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
  return { nonce, epoch, status: status as FlightStatus, result };
}

type Listener = ((notice: Notice) => void) & {
  /** A forget notice of the channel's flight (`forget <epoch>`, lua/forget.lua) came. */
  forgotten?: () => void;
  /** The subscriber connection broke: notices may be missed until the channel is confirmed again. */
  lost?: () => void;
  /** Re-reads the flight, through `via` when given (the subscriber connection), else the command connection. */
  recheck?: (via?: ScriptRunner) => void;
  /** Its re-read goes out right behind its channel's SSUBSCRIBE, on the subscriber connection (see `flush`). */
  readBehindSubscribe?: boolean;
};

/** A progress notice of a streamed run (`RUNNING`, see lua/streamAppend.lua): it never ends a terminal wait. */
const isProgress = (notice: Notice): boolean => notice.status === 'RUNNING' || notice.status === 'PENDING';

const CONFIRMED = Promise.resolve(true);
/** How often the subscriber connection is PINGed while forgets are listened for (see `schedulePing`). */
export const LIVENESS_PING_MS = 500;
/** How a forget notice starts (lua/forget.lua): `forget <epoch>`, which `parseNotice` refuses. */
const FORGET_NOTICE = 'forget ';
const noop = () => undefined;

interface Channel {
  readonly name: string;
  readonly listeners: Set<Listener>;
  /** Confirmed by the server, at this reconnect generation (-1: not confirmed). */
  liveAt: number;
  /** A SSUBSCRIBE for it is in flight. */
  subscribing: boolean;
  /** Settles when the next confirmation (true) or its failure / deadline (false) comes. */
  confirmed: Promise<boolean>;
  settle: (ok: boolean) => void;
  /** Re-read every waiter when the next confirmation comes (it comes late, or after a reconnect). */
  recheckOnConfirm: boolean;
}

/**
 * Taken by `acquire` when its flight's channel is live: notices of the channel received while the acquire
 * is in flight (or parked) are recorded. A FOLLOWER_WAIT reply parks it for `wait`, which then needs no
 * re-read: the subscription was up before the record was read, and stayed up.
 */
export interface Ticket {
  readonly channel: string;
  /** The subscriber's generation when the channel was live for it (-1: it was not). */
  generation: number;
  notice: Notice | undefined;
  /** The FOLLOWER_WAIT reply's epoch and nonce; -1 while the acquire is in flight. */
  epoch: number;
  nonce: string;
  parkedAt: number;
  readonly listener: Listener;
}

/** How long a parked ticket waits for its `wait`; past it the waiter re-reads. */
const TICKET_TTL_MS = 5000;
/** How often parked tickets are swept while any is parked. */
const SWEEP_INTERVAL_MS = 1000;
/** At most this many parked tickets (oldest dropped first; a dropped one only costs its waiter a read). */
const MAX_PARKED_TICKETS = 10_000;

export interface WaitOptions {
  epoch: number;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  /** The nonce of the run joined at `epoch`, when the caller knows it (from its FOLLOWER_WAIT reply). */
  nonce?: string | undefined;
}

export interface Notifications {
  readonly counters: NotificationCounters;
  /** Followers currently waiting. */
  readonly waiting: number;
  /** Call before sending an acquire of the flight on `channel`; undefined unless the channel is live. */
  beginAcquire(channel: string): Ticket | undefined;
  /**
   * For an acquire that will most likely join a running flight: subscribes `channel` first and resolves
   * once it is confirmed (then the acquire's FOLLOWER_WAIT needs no re-read), or after `maxWaitMs` without
   * that (then the wait re-reads as usual). Pass the ticket to `endAcquire` like `beginAcquire`'s.
   */
  prepareAcquire(channel: string, maxWaitMs: number): Promise<Ticket | undefined>;
  /** Call with the acquire's reply (or null when it failed): parks the ticket of a FOLLOWER_WAIT. */
  endAcquire(ticket: Ticket, followed: FlightMeta | null): void;
  /**
   * Waits for the terminal notice of `ref` at or after `epoch` on `channel`; `reread` reads the flight
   * (with its result) once the wait is covered: after the subscription is confirmed, or, where the
   * subscriber runs scripts, through it right behind the SSUBSCRIBE (`via`). Resolves null on timeout,
   * abort or close; never rejects.
   */
  wait(
    ref: FlightRef,
    channel: string,
    options: WaitOptions,
    reread: (via?: ScriptRunner) => Promise<{ meta: FlightMeta | null; result: string | undefined }>,
  ): Promise<TerminalEvent | null>;
  /**
   * Calls `onNotice` with every notice of `channel` (progress notices included) until the returned
   * function is called. `onCovered` runs once the subscription is confirmed (or could not be) and again
   * after a reconnect: what was published before it is to be read, not waited for.
   */
  listen(channel: string, onNotice: (notice: Notice) => void, onCovered: () => void): () => void;
  /**
   * Hears the forgets of the flight on `channel` (`FlightCoordinator.listenForgets`): `covered(true)` once
   * its subscription is confirmed (again after a reconnect), `covered(false)` when the subscriber
   * connection breaks. Returns the function that stops listening.
   */
  listenForgets(channel: string, listener: ForgetListener): () => void;
  close(): Promise<void>;
}

function toEvent(ref: FlightRef, status: FlightStatus, epoch: number, result?: string): TerminalEvent {
  const event: TerminalEvent = { stage: ref.stage, key: ref.key, status, epoch };
  // A result stored as bytes does not ride in an event (a script's text reply carries it damaged): the
  // waiter reads it with its next acquire.
  if (result !== undefined && status === 'SUCCEEDED' && !isBytesResult(result)) event.result = result;
  return event;
}

export function createNotifications(
  driver: Pick<RedisDriver, 'createSubscriber'>,
  options: { commandTimeoutMs: number; clock: Clock; onError?: (error: unknown, what: string) => void },
): Notifications {
  const channels = new Map<string, Channel>();
  const counters = { received: 0, foreign: 0, bytes: 0, channels: 0 };
  let subscriber: RedisSubscriber | undefined;
  /** Grows on every reconnect of the subscriber: confirmations of older generations no longer count. */
  let generation = 0;
  let waiting = 0;
  /** Ends each current wait with null (on close). */
  const finishers = new Set<() => void>();
  let closed = false;
  const toSubscribe = new Set<string>();
  const toUnsubscribe = new Set<string>();
  let flushScheduled = false;
  const parked = new Set<Ticket>();
  const { clock } = options;
  /** The pending sweep of parked tickets, while any is parked. */
  let sweeper: TimerHandle | undefined;
  const report = options.onError ?? (() => undefined);

  function onMessage(name: string, message: string): void {
    counters.received++;
    counters.bytes += Buffer.byteLength(message, 'utf8');
    const channel = channels.get(name);
    if (!channel || channel.listeners.size === 0) {
      counters.foreign++;
      return;
    }
    if (message.startsWith(FORGET_NOTICE)) {
      for (const listener of [...channel.listeners]) listener.forgotten?.();
      return;
    }
    const notice = parseNotice(message);
    if (!notice) return;
    for (const listener of [...channel.listeners]) listener(notice);
  }

  function onReconnect(): void {
    generation++;
    silent = false;
    for (const channel of channels.values()) {
      if (channel.liveAt >= 0) {
        counters.channels--;
        channel.liveAt = -1;
        resetConfirmation(channel);
      }
      channel.recheckOnConfirm = true;
      if (channel.listeners.size > 0) request(channel);
    }
    // Parked tickets were covered by the old connection only.
    for (const ticket of [...parked]) dropTicket(ticket);
  }

  /** The connection broke: whoever must not miss a notice learns it now, not at the reconnect. */
  function onDisconnect(): void {
    for (const channel of channels.values()) for (const listener of [...channel.listeners]) listener.lost?.();
  }

  /**
   * While forgets are listened for, the subscriber connection is PINGed every `LIVENESS_PING_MS`: one that
   * goes silent without breaking (a half-open connection, a blackholed network) is noticed within
   * `LIVENESS_PING_MS` plus the ping's deadline, and its forget listeners told at once. A PONG after that
   * re-covers them: every message the server sent before it has been read by then.
   */
  let forgetListeners = 0;
  let pinging: TimerHandle | undefined;
  let silent = false;
  function schedulePing(): void {
    if (pinging !== undefined || closed || forgetListeners === 0) return;
    pinging = clock.setTimeout(() => void ping(), LIVENESS_PING_MS);
  }
  async function ping(): Promise<void> {
    const s = subscriber;
    let answered = false;
    try {
      if (s?.ping) {
        await withDeadline(s.ping(), Math.min(options.commandTimeoutMs, LIVENESS_PING_MS));
        answered = true;
      }
    } catch {
      // No answer by the deadline: the connection went silent.
    }
    pinging = undefined;
    if (closed) return;
    if (s?.ping && !answered && !silent) {
      silent = true;
      onDisconnect();
    } else if (answered && silent) {
      silent = false;
      for (const channel of channels.values()) {
        if (channel.liveAt < 0) continue;
        for (const listener of [...channel.listeners]) if (listener.forgotten) listener.recheck?.();
      }
    }
    schedulePing();
  }

  function sub(): RedisSubscriber {
    subscriber ??= driver.createSubscriber({ onMessage, onReconnect, onDisconnect });
    return subscriber;
  }

  function newChannel(name: string): Channel {
    let settle!: (ok: boolean) => void;
    const confirmed = new Promise<boolean>((resolve) => (settle = resolve));
    return { name, listeners: new Set(), liveAt: -1, subscribing: false, confirmed, settle, recheckOnConfirm: false };
  }

  function resetConfirmation(channel: Channel): void {
    channel.confirmed = new Promise<boolean>((resolve) => (channel.settle = resolve));
  }

  function schedule(): void {
    if (flushScheduled || closed) return;
    flushScheduled = true;
    setImmediate(flush);
  }

  function request(channel: Channel): void {
    toUnsubscribe.delete(channel.name);
    if (channel.subscribing) return;
    toSubscribe.add(channel.name);
    schedule();
  }

  function flush(): void {
    flushScheduled = false;
    if (closed) return;
    const subscribeNow: Channel[] = [];
    for (const name of toSubscribe) {
      const channel = channels.get(name);
      if (channel && channel.listeners.size > 0 && !channel.subscribing) subscribeNow.push(channel);
    }
    toSubscribe.clear();
    const unsubscribeNow: string[] = [];
    for (const name of toUnsubscribe) {
      const channel = channels.get(name);
      if (!channel || channel.listeners.size > 0 || channel.subscribing) continue;
      channels.delete(name);
      if (channel.liveAt >= 0) counters.channels--;
      unsubscribeNow.push(name);
    }
    toUnsubscribe.clear();
    if (subscribeNow.length > 0) subscribeBatch(subscribeNow);
    if (unsubscribeNow.length > 0) {
      sub()
        .unsubscribe(unsubscribeNow)
        .catch((error: unknown) => report(error, 'unsubscribe'));
    }
  }

  function subscribeBatch(batch: Channel[]): void {
    const at = generation;
    for (const channel of batch) channel.subscribing = true;
    const subscriber = sub();
    const sent = subscriber.subscribe(batch.map((c) => c.name));
    if (subscriber.scripts) {
      for (const channel of batch) {
        for (const listener of channel.listeners) {
          if (!listener.readBehindSubscribe) continue;
          listener.readBehindSubscribe = false;
          listener.recheck?.(subscriber.scripts);
        }
      }
    }
    withDeadline(sent, options.commandTimeoutMs).catch(() => {
      // No confirmation in time: the waiters re-read and poll; the command may still land (see below).
      for (const channel of batch) {
        if (channel.liveAt >= 0) continue;
        channel.recheckOnConfirm = true;
        unconfirm(channel);
      }
    });
    sent.then(
      () => {
        for (const channel of batch) {
          channel.subscribing = false;
          if (closed) continue;
          if (at !== generation) {
            // Confirmed on a connection that broke since: ask again on the new one.
            if (channel.listeners.size > 0) request(channel);
            continue;
          }
          confirm(channel, at);
          // Nobody waits any more: undo the subscription.
          if (channel.listeners.size === 0) {
            toUnsubscribe.add(channel.name);
            schedule();
          }
        }
      },
      (error: unknown) => {
        report(error, 'subscribe');
        for (const channel of batch) {
          channel.subscribing = false;
          unconfirm(channel);
          // Nobody waits any more: forget it (and undo it, should the command have landed after all).
          if (channel.listeners.size === 0) toUnsubscribe.add(channel.name);
        }
        schedule();
      },
    );
  }

  function confirm(channel: Channel, at: number): void {
    if (channel.liveAt < 0) counters.channels++;
    channel.liveAt = at;
    channel.settle(true);
    channel.confirmed = CONFIRMED;
    channel.settle = noop;
    // Confirmed late (after its deadline) or again after a reconnect: notices may have been missed.
    if (channel.recheckOnConfirm) {
      channel.recheckOnConfirm = false;
      for (const listener of channel.listeners) listener.recheck?.();
    }
  }

  function unconfirm(channel: Channel): void {
    channel.settle(false);
    resetConfirmation(channel);
  }

  function watch(name: string, listener: Listener): Channel {
    let channel = channels.get(name);
    if (!channel) channels.set(name, (channel = newChannel(name)));
    channel.listeners.add(listener);
    if (channel.liveAt < 0) request(channel);
    else toUnsubscribe.delete(name);
    return channel;
  }

  function unwatch(channel: Channel, listener: Listener): void {
    if (!channel.listeners.delete(listener) || channel.listeners.size > 0) return;
    toSubscribe.delete(channel.name);
    toUnsubscribe.add(channel.name);
    schedule();
  }

  function dropTicket(ticket: Ticket): void {
    const channel = channels.get(ticket.channel);
    if (channel) unwatch(channel, ticket.listener);
    if (parked.delete(ticket) && parked.size === 0 && sweeper !== undefined) {
      clock.clearTimeout(sweeper);
      sweeper = undefined;
    }
  }

  /** Sweeps every second while tickets are parked. */
  function scheduleSweep(): void {
    sweeper ??= clock.setTimeout(() => {
      sweeper = undefined;
      sweepTickets();
      if (parked.size > 0) scheduleSweep();
    }, SWEEP_INTERVAL_MS);
  }

  function sweepTickets(): void {
    const oldest = clock.now() - TICKET_TTL_MS;
    for (const ticket of parked) {
      if (ticket.parkedAt > oldest && parked.size <= MAX_PARKED_TICKETS) break;
      dropTicket(ticket);
    }
  }

  /** A ticket of an acquire on `name`: it records the newest terminal notice of the channel. */
  function newTicket(name: string): Ticket {
    const ticket: Ticket = {
      channel: name,
      generation,
      notice: undefined,
      epoch: -1,
      nonce: '',
      parkedAt: 0,
      listener: (notice) => {
        if (isProgress(notice)) return;
        if (!ticket.notice || ticket.notice.epoch < notice.epoch) ticket.notice = notice;
      },
    };
    return ticket;
  }

  function takeTicket(name: string, epoch: number): Ticket | undefined {
    for (const ticket of parked) {
      if (ticket.channel === name && ticket.epoch === epoch) {
        parked.delete(ticket);
        return ticket;
      }
    }
    return undefined;
  }

  return {
    counters: {
      get received() {
        return counters.received;
      },
      get foreign() {
        return counters.foreign;
      },
      get bytes() {
        return counters.bytes;
      },
      get channels() {
        return counters.channels;
      },
    },

    get waiting() {
      return waiting;
    },

    beginAcquire(name) {
      if (closed) return undefined;
      const channel = channels.get(name);
      if (!channel || channel.liveAt !== generation) return undefined;
      const ticket = newTicket(name);
      watch(name, ticket.listener);
      return ticket;
    },

    async prepareAcquire(name, maxWaitMs) {
      if (closed) return undefined;
      const ticket = newTicket(name);
      const channel = watch(name, ticket.listener);
      if (channel.liveAt !== generation) {
        let timer: TimerHandle | undefined;
        const late = new Promise<boolean>((resolve) => (timer = clock.setTimeout(() => resolve(false), maxWaitMs)));
        await Promise.race([channel.confirmed, late]);
        clock.clearTimeout(timer!);
      }
      ticket.generation = channel.liveAt === generation ? generation : -1;
      return ticket;
    },

    endAcquire(ticket, followed) {
      if (!followed || closed) return dropTicket(ticket);
      ticket.epoch = followed.epoch;
      ticket.nonce = followed.nonce;
      ticket.parkedAt = clock.now();
      parked.add(ticket);
      if (parked.size > MAX_PARKED_TICKETS) sweepTickets();
      if (parked.size > 0) scheduleSweep();
    },

    wait(ref, name, { epoch, timeoutMs, signal, nonce: joined }, reread) {
      return new Promise<TerminalEvent | null>((resolve) => {
        if (closed || signal?.aborted) return resolve(null);
        const ticket = takeTicket(name, epoch);
        /** The run this waiter joined, once known: from its acquire, or from the re-read. */
        let nonce = ticket?.nonce ?? joined ?? '';
        let settled = false;
        const finish = (event: TerminalEvent | null) => {
          if (settled) return;
          settled = true;
          clock.clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          finishers.delete(onAbort);
          waiting--;
          unwatch(channel, listener);
          resolve(event);
        };
        /** A notice of the joined run carries its result; a newer run's notice only wakes the waiter. */
        const accept = (notice: Notice): boolean => {
          if (notice.epoch < epoch || isProgress(notice)) return false;
          if (notice.epoch > epoch) {
            finish(toEvent(ref, notice.status, notice.epoch));
            return true;
          }
          if (nonce !== '' && notice.nonce !== nonce) return false;
          finish(toEvent(ref, notice.status, notice.epoch, nonce !== '' ? notice.result : undefined));
          return true;
        };
        const recheck = (via?: ScriptRunner) => {
          reread(via).then(
            ({ meta, result }) => {
              if (!meta || meta.epoch < epoch) return;
              if (meta.epoch === epoch && nonce === '') nonce = meta.nonce;
              if (meta.status !== 'PENDING' && meta.status !== 'RUNNING') {
                finish(toEvent(ref, meta.status, meta.epoch, meta.epoch === epoch ? result : undefined));
              }
            },
            () => undefined, // the waiter still resolves by its timeout; the caller polls
          );
        };
        const listener: Listener = (notice) => void accept(notice);
        listener.recheck = recheck;
        const onAbort = () => finish(null);
        const timer = clock.setTimeout(onAbort, Math.max(0, timeoutMs));
        signal?.addEventListener('abort', onAbort, { once: true });
        waiting++;
        finishers.add(onAbort);
        const channel = watch(name, listener);
        if (ticket) {
          dropTicket(ticket); // its reference passes to this waiter's listener
          if (ticket.notice && accept(ticket.notice)) return;
          // Live before the acquire read the record, and never broken since: no re-read needed.
          if (ticket.generation === generation && channel.liveAt === generation) return;
        }
        const scripts = sub().scripts;
        if (scripts && channel.liveAt < 0) {
          // The re-read rides with the subscription: behind the SSUBSCRIBE already sent, or the one the next
          // flush sends. Only a failed or late subscription needs another read, after its confirmation.
          if (channel.subscribing) recheck(scripts);
          else listener.readBehindSubscribe = true;
          channel.confirmed.then((ok) => {
            if (!ok) recheck();
          }, noop);
          return;
        }
        channel.confirmed.then(
          () => recheck(),
          () => recheck(),
        );
      });
    },

    listen(name, onNotice, onCovered) {
      if (closed) return noop;
      let active = true;
      const listener: Listener = (notice) => onNotice(notice);
      const recheck = () => {
        if (active) onCovered();
      };
      listener.recheck = recheck;
      const channel = watch(name, listener);
      void channel.confirmed.then(recheck);
      return () => {
        active = false;
        unwatch(channel, listener);
      };
    },

    listenForgets(name, handlers) {
      if (closed) return noop;
      let active = true;
      const listener: Listener = () => undefined; // terminal notices are the waiters' business
      listener.forgotten = () => {
        if (active) handlers.forgotten();
      };
      listener.lost = () => {
        if (active) handlers.covered(false);
      };
      const channel = watch(name, listener);
      forgetListeners++;
      schedulePing();
      // Confirmed again (late, or after a reconnect): heard from now on.
      listener.recheck = () => {
        if (active && channel.liveAt >= 0 && !silent) handlers.covered(true);
      };
      if (channel.liveAt >= 0 && !silent) handlers.covered(true);
      else
        void channel.confirmed.then((ok) => {
          if (active && ok && channel.liveAt >= 0 && !silent) handlers.covered(true);
        });
      return () => {
        if (!active) return;
        active = false;
        forgetListeners--;
        unwatch(channel, listener);
      };
    },

    async close() {
      if (closed) return;
      closed = true;
      for (const ticket of [...parked]) dropTicket(ticket);
      for (const finish of [...finishers]) finish();
      for (const channel of channels.values()) channel.settle(false);
      channels.clear();
      if (pinging !== undefined) clock.clearTimeout(pinging);
      pinging = undefined;
      if (sweeper !== undefined) clock.clearTimeout(sweeper);
      sweeper = undefined;
      const s = subscriber;
      subscriber = undefined;
      if (s) await s.close().catch(() => undefined);
    },
  };
}
