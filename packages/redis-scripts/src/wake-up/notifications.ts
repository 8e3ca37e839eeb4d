/**
 * Follower wake-up, in one place: a channel per flight (its hash tag + the DB index, see `noticeChannel`)
 * subscribed on the coordinator's ONE subscriber (wake-up/subscriptions.ts) only while this process has
 * waiters on it.
 *
 * A wait is covered by the subscription only once the server confirmed it; then the flight is re-read
 * once (a terminal write between the follower's acquire and the confirmation is seen by that read, a
 * later one arrives as a notice). An acquire sent while the channel is live needs no re-read at all: its
 * ticket (wake-up/tickets.ts) records the notices that come meanwhile. A notice wakes a waiter only when it
 * proves it belongs to the run the waiter joined (same epoch and nonce; a newer epoch only wakes it to ask
 * again, without its result).
 */
import type { Clock, FlightMeta, FlightRef, FlightStatus, ForgetListener, TerminalEvent, TimerHandle } from '@flight/core/adapter';
import type { RedisDriver, ScriptRunner } from '../driver';
import { isBytesResult } from '../spine/reply';
import { noop, Subscriptions, type Listener, type Notice } from './subscriptions';
import { isProgress, Tickets, type Ticket } from './tickets';

export { LIVENESS_PING_MS, parseNotice, type Notice } from './subscriptions';
export type { Ticket } from './tickets';

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
  /** True while this process's subscriber is confirmed on `channel` (the server counts it among its listeners). */
  listensOn(channel: string): boolean;
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

/** What a wait shares with the rest of the notifications. */
interface WaitContext {
  readonly subscriptions: Subscriptions;
  readonly tickets: Tickets;
  readonly clock: Clock;
  /** Ends each current wait with null (on close). */
  readonly finishers: Set<() => void>;
  /** Counts the followers waiting. */
  readonly waiting: { count: number };
}

/** `Notifications.wait`: resolves the terminal event of the run joined at `epoch`, or null. */
function waitForTerminal(
  context: WaitContext,
  ref: FlightRef,
  name: string,
  { epoch, timeoutMs, signal, nonce: joined }: WaitOptions,
  reread: (via?: ScriptRunner) => Promise<{ meta: FlightMeta | null; result: string | undefined }>,
): Promise<TerminalEvent | null> {
  const { subscriptions, tickets, clock, finishers, waiting } = context;
  return new Promise<TerminalEvent | null>((resolve) => {
    if (subscriptions.closed || signal?.aborted) return resolve(null);
    const ticket = tickets.take(name, epoch);
    /** The run this waiter joined, once known: from its acquire, or from the re-read. */
    let nonce = ticket?.nonce ?? joined ?? '';
    let settled = false;
    const finish = (event: TerminalEvent | null) => {
      if (settled) return;
      settled = true;
      clock.clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      finishers.delete(onAbort);
      waiting.count--;
      subscriptions.unwatch(channel, listener);
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
    waiting.count++;
    finishers.add(onAbort);
    const channel = subscriptions.watch(name, listener);
    if (ticket) {
      tickets.drop(ticket); // its reference passes to this waiter's listener
      if (ticket.notice && accept(ticket.notice)) return;
      // Live before the acquire read the record, and never broken since: no re-read needed.
      if (ticket.generation === subscriptions.generation && channel.liveAt === subscriptions.generation) return;
    }
    const scripts = subscriptions.sub().scripts;
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
}

/** `Notifications.listenForgets`. */
function listenForgets(subscriptions: Subscriptions, name: string, handlers: ForgetListener): () => void {
  let active = true;
  const listener: Listener = () => undefined; // terminal notices are the waiters' business
  listener.forgotten = () => {
    if (active) handlers.forgotten();
  };
  listener.lost = () => {
    if (active) handlers.covered(false);
  };
  const channel = subscriptions.watch(name, listener);
  subscriptions.addForgetListener();
  const heard = () => channel.liveAt >= 0 && !subscriptions.silent;
  // Confirmed again (late, or after a reconnect): heard from now on.
  listener.recheck = () => {
    if (active && heard()) handlers.covered(true);
  };
  if (heard()) handlers.covered(true);
  else
    void channel.confirmed.then((ok) => {
      if (active && ok && heard()) handlers.covered(true);
    });
  return () => {
    if (!active) return;
    active = false;
    subscriptions.removeForgetListener();
    subscriptions.unwatch(channel, listener);
  };
}

export function createNotifications(
  driver: Pick<RedisDriver, 'createSubscriber'>,
  options: { commandTimeoutMs: number; clock: Clock; onError?: (error: unknown, what: string) => void },
): Notifications {
  const { clock } = options;
  const subscriptions: Subscriptions = new Subscriptions(driver, {
    ...options,
    // Parked tickets were covered by the old connection only.
    onReconnect: () => tickets.dropAll(),
  });
  const tickets = new Tickets(subscriptions, clock);
  const context: WaitContext = { subscriptions, tickets, clock, finishers: new Set(), waiting: { count: 0 } };
  const { counters } = subscriptions;

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
      return context.waiting.count;
    },

    listensOn(name) {
      return !subscriptions.closed && subscriptions.channels.get(name)?.liveAt === subscriptions.generation;
    },

    beginAcquire(name) {
      if (subscriptions.closed) return undefined;
      const channel = subscriptions.channels.get(name);
      if (!channel || channel.liveAt !== subscriptions.generation) return undefined;
      const ticket = tickets.open(name);
      subscriptions.watch(name, ticket.listener);
      return ticket;
    },

    async prepareAcquire(name, maxWaitMs) {
      if (subscriptions.closed) return undefined;
      const ticket = tickets.open(name);
      const channel = subscriptions.watch(name, ticket.listener);
      if (channel.liveAt !== subscriptions.generation) {
        let timer: TimerHandle | undefined;
        const late = new Promise<boolean>((resolve) => (timer = clock.setTimeout(() => resolve(false), maxWaitMs)));
        await Promise.race([channel.confirmed, late]);
        clock.clearTimeout(timer!);
      }
      ticket.generation = channel.liveAt === subscriptions.generation ? subscriptions.generation : -1;
      return ticket;
    },

    endAcquire(ticket, followed) {
      if (!followed || subscriptions.closed) return tickets.drop(ticket);
      tickets.park(ticket, followed);
    },

    wait: (ref, name, waitOptions, reread) => waitForTerminal(context, ref, name, waitOptions, reread),

    listen(name, onNotice, onCovered) {
      if (subscriptions.closed) return noop;
      let active = true;
      const listener: Listener = (notice) => onNotice(notice);
      const recheck = () => {
        if (active) onCovered();
      };
      listener.recheck = recheck;
      const channel = subscriptions.watch(name, listener);
      void channel.confirmed.then(recheck);
      return () => {
        active = false;
        subscriptions.unwatch(channel, listener);
      };
    },

    listenForgets: (name, handlers) => (subscriptions.closed ? noop : listenForgets(subscriptions, name, handlers)),

    async close() {
      if (subscriptions.closed) return;
      subscriptions.closed = true;
      tickets.dropAll();
      for (const finish of [...context.finishers]) finish();
      await subscriptions.close();
    },
  };
}
