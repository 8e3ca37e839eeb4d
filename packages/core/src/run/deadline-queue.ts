/**
 * Deadlines without a timer per call. Every run and every wait has a deadline, but most settle long
 * before it: arming and clearing one `setTimeout` each time would cost more than the call itself. Deadlines
 * of the same length are due in the order they were set, so each length gets one lane — a doubly linked
 * list in due order — watched by at most one timer armed for its head. Setting and cancelling a deadline
 * are O(1) and allocate one small node; the lane's timer re-arms itself only when it fires.
 */
import type { Clock, TimerHandle } from '../ports/clock.js';
import type { FlightLogger } from '../ports/logger.js';

/** A scheduled deadline; pass it to `cancel` once the work it watches has settled. */
export type Deadline = object;

const MAX_TIMER_MS = 2 ** 31 - 1;

class Entry {
  prev: Entry | undefined = undefined;
  next: Entry | undefined = undefined;
  constructor(
    readonly lane: Lane,
    readonly at: number,
    readonly onExpire: () => void,
  ) {}
}

class Lane {
  head: Entry | undefined = undefined;
  tail: Entry | undefined = undefined;
  timer: TimerHandle | undefined = undefined;
  constructor(readonly delayMs: number) {}
}

export class DeadlineQueue {
  private readonly lanes = new Map<number, Lane>();

  constructor(
    private readonly clock: Clock,
    private readonly logger: FlightLogger,
  ) {}

  /**
   * Calls `onExpire` once, `delayMs` after `now`, unless cancelled first. `onExpire` must not throw (it is
   * guarded anyway).
   */
  schedule(delayMs: number, onExpire: () => void, now = this.clock.now()): Deadline {
    let lane = this.lanes.get(delayMs);
    if (!lane) this.lanes.set(delayMs, (lane = new Lane(delayMs)));
    const entry = new Entry(lane, now + delayMs, onExpire);
    if (lane.tail) {
      lane.tail.next = entry;
      entry.prev = lane.tail;
      lane.tail = entry;
    } else {
      lane.head = lane.tail = entry;
    }
    if (lane.timer === undefined) this.arm(lane, entry.at);
    return entry;
  }

  /** Cancels a deadline (idempotent; a no-op once it fired). */
  cancel(deadline: Deadline | undefined): void {
    if (deadline) this.unlink(deadline as Entry);
  }

  now(): number {
    return this.clock.now();
  }

  /** Deadlines still scheduled (for tests). */
  get size(): number {
    let n = 0;
    for (const lane of this.lanes.values()) for (let e = lane.head; e; e = e.next) n++;
    return n;
  }

  private unlink(entry: Entry): void {
    const lane = entry.lane;
    if (entry.prev === undefined && lane.head !== entry) return;
    if (entry.prev) entry.prev.next = entry.next;
    else lane.head = entry.next;
    if (entry.next) entry.next.prev = entry.prev;
    else lane.tail = entry.prev;
    entry.prev = entry.next = undefined;
  }

  private arm(lane: Lane, at: number): void {
    // Timers longer than 2^31 - 1 ms fire at once in Node: wait in steps instead (fire() re-arms).
    lane.timer = this.clock.setTimeout(() => this.fire(lane), Math.min(MAX_TIMER_MS, Math.max(0, at - this.clock.now())));
  }

  private fire(lane: Lane): void {
    lane.timer = undefined;
    const now = this.clock.now();
    for (let entry = lane.head; entry && entry.at <= now; entry = lane.head) {
      this.unlink(entry);
      try {
        entry.onExpire();
      } catch (error) {
        this.logger.error({ err: error }, 'deadline handler threw');
      }
    }
    if (lane.head) this.arm(lane, lane.head.at);
    else if (this.lanes.get(lane.delayMs) === lane) this.lanes.delete(lane.delayMs);
  }
}
