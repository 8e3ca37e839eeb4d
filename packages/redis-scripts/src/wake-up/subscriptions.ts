/**
 * The coordinator's ONE subscriber connection (one per shard on a cluster) and the flights' channels on
 * it: a channel is subscribed only while somebody of this process listens on it (reference-counted),
 * SSUBSCRIBE / SUNSUBSCRIBE are batched per tick, and each channel knows whether the server confirmed it
 * on the current connection. Messages go to the channel's listeners; a reconnect or a silent connection
 * is told to them. The subscriber is never replaced: a subscribe that misses its deadline leaves its
 * listeners to their polling, and a late confirmation is used (or undone) when it comes.
 */
import type { Clock, FlightStatus, TimerHandle } from '@flight/core/adapter';
import type { RedisDriver, RedisSubscriber, ScriptRunner } from '../driver';
import { withDeadline } from '../errors';

/** A terminal notice as published by the scripts: `nonce epoch status`, then for inlined results ` <bytes> <result>`. */
export interface Notice {
  nonce: string;
  epoch: number;
  status: FlightStatus;
  result: string | undefined;
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

/** One listener of a channel: called with each notice, and told what else happens to the channel. */
export type Listener = ((notice: Notice) => void) & {
  /** A forget notice of the channel's flight (`forget <epoch>`, lua/forget.lua) came. */
  forgotten?: () => void;
  /** The subscriber connection broke: notices may be missed until the channel is confirmed again. */
  lost?: () => void;
  /** Re-reads the flight, through `via` when given (the subscriber connection), else the command connection. */
  recheck?: (via?: ScriptRunner) => void;
  /** Its re-read goes out right behind its channel's SSUBSCRIBE, on the subscriber connection (see `subscribeBatch`). */
  readBehindSubscribe?: boolean;
};

export interface Channel {
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

const CONFIRMED = Promise.resolve(true);
/** How often the subscriber connection is PINGed while forgets are listened for (see `schedulePing`). */
export const LIVENESS_PING_MS = 500;
/** How a forget notice starts (lua/forget.lua): `forget <epoch>`, which `parseNotice` refuses. */
const FORGET_NOTICE = 'forget ';
export const noop = () => undefined;

export interface SubscriptionOptions {
  commandTimeoutMs: number;
  clock: Clock;
  onError?: ((error: unknown, what: string) => void) | undefined;
  /** Called on every reconnect, after the channels were asked again. */
  onReconnect?: (() => void) | undefined;
}

export class Subscriptions {
  readonly channels = new Map<string, Channel>();
  readonly counters = { received: 0, foreign: 0, bytes: 0, channels: 0 };
  /** Grows on every reconnect of the subscriber: confirmations of older generations no longer count. */
  generation = 0;
  closed = false;
  /** The subscriber connection stopped answering its PINGs (and has not answered since). */
  silent = false;
  private subscriber: RedisSubscriber | undefined;
  private readonly toSubscribe = new Set<string>();
  private readonly toUnsubscribe = new Set<string>();
  private flushScheduled = false;
  private forgetListeners = 0;
  private pinging: TimerHandle | undefined;
  private readonly report: (error: unknown, what: string) => void;

  constructor(
    private readonly driver: Pick<RedisDriver, 'createSubscriber'>,
    private readonly options: SubscriptionOptions,
  ) {
    this.report = options.onError ?? noop;
  }

  /** The subscriber connection, created on first use. */
  sub(): RedisSubscriber {
    this.subscriber ??= this.driver.createSubscriber({
      onMessage: (name, message) => this.onMessage(name, message),
      onReconnect: () => this.onReconnect(),
      onDisconnect: () => this.onDisconnect(),
    });
    return this.subscriber;
  }

  /** Adds `listener` to the channel `name`, subscribing it unless it is live. */
  watch(name: string, listener: Listener): Channel {
    let channel = this.channels.get(name);
    if (!channel) this.channels.set(name, (channel = newChannel(name)));
    channel.listeners.add(listener);
    if (channel.liveAt < 0) this.request(channel);
    else this.toUnsubscribe.delete(name);
    return channel;
  }

  /** Removes `listener`; the channel's last listener gone, the channel is unsubscribed. */
  unwatch(channel: Channel, listener: Listener): void {
    if (!channel.listeners.delete(listener) || channel.listeners.size > 0) return;
    this.toSubscribe.delete(channel.name);
    this.toUnsubscribe.add(channel.name);
    this.schedule();
  }

  /**
   * While forgets are listened for, the subscriber connection is PINGed every `LIVENESS_PING_MS`: one that
   * goes silent without breaking (a half-open connection, a blackholed network) is noticed within
   * `LIVENESS_PING_MS` plus the ping's deadline, and its forget listeners told at once. A PONG after that
   * re-covers them: every message the server sent before it has been read by then.
   */
  addForgetListener(): void {
    this.forgetListeners++;
    this.schedulePing();
  }

  removeForgetListener(): void {
    this.forgetListeners--;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const channel of this.channels.values()) channel.settle(false);
    this.channels.clear();
    if (this.pinging !== undefined) this.options.clock.clearTimeout(this.pinging);
    this.pinging = undefined;
    const s = this.subscriber;
    this.subscriber = undefined;
    if (s) await s.close().catch(noop);
  }

  private onMessage(name: string, message: string): void {
    const { counters } = this;
    counters.received++;
    counters.bytes += Buffer.byteLength(message, 'utf8');
    const channel = this.channels.get(name);
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

  private onReconnect(): void {
    this.generation++;
    this.silent = false;
    for (const channel of this.channels.values()) {
      if (channel.liveAt >= 0) {
        this.counters.channels--;
        channel.liveAt = -1;
        resetConfirmation(channel);
      }
      channel.recheckOnConfirm = true;
      if (channel.listeners.size > 0) this.request(channel);
    }
    this.options.onReconnect?.();
  }

  /** The connection broke: whoever must not miss a notice learns it now, not at the reconnect. */
  private onDisconnect(): void {
    for (const channel of this.channels.values()) for (const listener of [...channel.listeners]) listener.lost?.();
  }

  private schedulePing(): void {
    if (this.pinging !== undefined || this.closed || this.forgetListeners === 0) return;
    this.pinging = this.options.clock.setTimeout(() => void this.ping(), LIVENESS_PING_MS);
  }

  private async ping(): Promise<void> {
    const s = this.subscriber;
    let answered = false;
    try {
      if (s?.ping) {
        await withDeadline(s.ping(), Math.min(this.options.commandTimeoutMs, LIVENESS_PING_MS));
        answered = true;
      }
    } catch {
      // No answer by the deadline: the connection went silent.
    }
    this.pinging = undefined;
    if (this.closed) return;
    if (s?.ping && !answered && !this.silent) {
      this.silent = true;
      this.onDisconnect();
    } else if (answered && this.silent) {
      this.silent = false;
      for (const channel of this.channels.values()) {
        if (channel.liveAt < 0) continue;
        for (const listener of [...channel.listeners]) if (listener.forgotten) listener.recheck?.();
      }
    }
    this.schedulePing();
  }

  private schedule(): void {
    if (this.flushScheduled || this.closed) return;
    this.flushScheduled = true;
    setImmediate(() => this.flush());
  }

  private request(channel: Channel): void {
    this.toUnsubscribe.delete(channel.name);
    if (channel.subscribing) return;
    this.toSubscribe.add(channel.name);
    this.schedule();
  }

  private flush(): void {
    this.flushScheduled = false;
    if (this.closed) return;
    const subscribeNow: Channel[] = [];
    for (const name of this.toSubscribe) {
      const channel = this.channels.get(name);
      if (channel && channel.listeners.size > 0 && !channel.subscribing) subscribeNow.push(channel);
    }
    this.toSubscribe.clear();
    const unsubscribeNow: string[] = [];
    for (const name of this.toUnsubscribe) {
      const channel = this.channels.get(name);
      if (!channel || channel.listeners.size > 0 || channel.subscribing) continue;
      this.channels.delete(name);
      if (channel.liveAt >= 0) this.counters.channels--;
      unsubscribeNow.push(name);
    }
    this.toUnsubscribe.clear();
    if (subscribeNow.length > 0) this.subscribeBatch(subscribeNow);
    if (unsubscribeNow.length > 0) {
      this.sub()
        .unsubscribe(unsubscribeNow)
        .catch((error: unknown) => this.report(error, 'unsubscribe'));
    }
  }

  private subscribeBatch(batch: Channel[]): void {
    const at = this.generation;
    for (const channel of batch) channel.subscribing = true;
    const subscriber = this.sub();
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
    withDeadline(sent, this.options.commandTimeoutMs).catch(() => {
      // No confirmation in time: the waiters re-read and poll; the command may still land (see below).
      for (const channel of batch) {
        if (channel.liveAt >= 0) continue;
        channel.recheckOnConfirm = true;
        unconfirm(channel);
      }
    });
    sent.then(
      () => this.confirmed(batch, at),
      (error: unknown) => {
        this.report(error, 'subscribe');
        for (const channel of batch) {
          channel.subscribing = false;
          unconfirm(channel);
          // Nobody waits any more: forget it (and undo it, should the command have landed after all).
          if (channel.listeners.size === 0) this.toUnsubscribe.add(channel.name);
        }
        this.schedule();
      },
    );
  }

  /** The server confirmed `batch`, sent at generation `at`. */
  private confirmed(batch: Channel[], at: number): void {
    for (const channel of batch) {
      channel.subscribing = false;
      if (this.closed) continue;
      if (at !== this.generation) {
        // Confirmed on a connection that broke since: ask again on the new one.
        if (channel.listeners.size > 0) this.request(channel);
        continue;
      }
      this.confirm(channel, at);
      // Nobody waits any more: undo the subscription.
      if (channel.listeners.size === 0) {
        this.toUnsubscribe.add(channel.name);
        this.schedule();
      }
    }
  }

  private confirm(channel: Channel, at: number): void {
    if (channel.liveAt < 0) this.counters.channels++;
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
}

function newChannel(name: string): Channel {
  let settle!: (ok: boolean) => void;
  const confirmed = new Promise<boolean>((resolve) => (settle = resolve));
  return { name, listeners: new Set(), liveAt: -1, subscribing: false, confirmed, settle, recheckOnConfirm: false };
}

function resetConfirmation(channel: Channel): void {
  channel.confirmed = new Promise<boolean>((resolve) => (channel.settle = resolve));
}

function unconfirm(channel: Channel): void {
  channel.settle(false);
  resetConfirmation(channel);
}
