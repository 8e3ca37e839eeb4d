/**
 * Tickets of acquires sent while their flight's channel was live: a ticket records the newest terminal
 * notice of the channel while its acquire is in flight, and a FOLLOWER_WAIT reply parks it for the wait
 * that follows, which then needs no re-read (the subscription was up before the record was read, and
 * stayed up). Parked tickets are swept after `TICKET_TTL_MS`, and all of them on a reconnect.
 */
import type { Clock, FlightMeta, TimerHandle } from '@flight/core/adapter';
import type { Listener, Notice, Subscriptions } from './subscriptions';

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

/** A progress notice of a streamed run (`RUNNING`, see lua/streamAppend.lua): it never ends a terminal wait. */
export const isProgress = (notice: Notice): boolean => notice.status === 'RUNNING' || notice.status === 'PENDING';

export class Tickets {
  private readonly parked = new Set<Ticket>();
  /** The pending sweep of parked tickets, while any is parked. */
  private sweeper: TimerHandle | undefined;

  constructor(
    private readonly subscriptions: Subscriptions,
    private readonly clock: Clock,
  ) {}

  /** A ticket of an acquire on `name`, listening on its channel: it records the newest terminal notice. */
  open(name: string): Ticket {
    const ticket: Ticket = {
      channel: name,
      generation: this.subscriptions.generation,
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

  /** Parks `ticket` for the wait of the run its acquire followed. */
  park(ticket: Ticket, followed: FlightMeta): void {
    ticket.epoch = followed.epoch;
    ticket.nonce = followed.nonce;
    ticket.parkedAt = this.clock.now();
    this.parked.add(ticket);
    if (this.parked.size > MAX_PARKED_TICKETS) this.sweep();
    if (this.parked.size > 0) this.scheduleSweep();
  }

  /** The parked ticket of the wait for `epoch` on `name`, taken out of the parked set. */
  take(name: string, epoch: number): Ticket | undefined {
    for (const ticket of this.parked) {
      if (ticket.channel === name && ticket.epoch === epoch) {
        this.parked.delete(ticket);
        return ticket;
      }
    }
    return undefined;
  }

  /** Stops `ticket` listening on its channel (and unparks it). */
  drop(ticket: Ticket): void {
    const channel = this.subscriptions.channels.get(ticket.channel);
    if (channel) this.subscriptions.unwatch(channel, ticket.listener);
    if (this.parked.delete(ticket) && this.parked.size === 0 && this.sweeper !== undefined) {
      this.clock.clearTimeout(this.sweeper);
      this.sweeper = undefined;
    }
  }

  /** Drops every parked ticket (they were covered by a connection that broke, or the coordinator closes). */
  dropAll(): void {
    for (const ticket of [...this.parked]) this.drop(ticket);
  }

  /** Sweeps every second while tickets are parked. */
  private scheduleSweep(): void {
    this.sweeper ??= this.clock.setTimeout(() => {
      this.sweeper = undefined;
      this.sweep();
      if (this.parked.size > 0) this.scheduleSweep();
    }, SWEEP_INTERVAL_MS);
  }

  private sweep(): void {
    const oldest = this.clock.now() - TICKET_TTL_MS;
    for (const ticket of this.parked) {
      if (ticket.parkedAt > oldest && this.parked.size <= MAX_PARKED_TICKETS) break;
      this.drop(ticket);
    }
  }
}
