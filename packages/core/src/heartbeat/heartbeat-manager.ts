/**
 * The owner's lease keeper. The lease renews only while the owner makes progress (a timer alone would
 * keep a stuck owner's lease forever while its process lives). It stops — and reports the loss — when
 * - the run passes the stage's max run time (`max-run-time`),
 * - the supplier reported progress once and then stayed silent for the stall window (`stalled`),
 * - the coordinator refuses the renewal (`fenced`, `expired`, `cancelled`, or `forgotten`: the run was
 *   forgotten cluster-wide and holds no lease any more, but its owner may finish it for its own callers),
 * - renewals keep failing until the lease may have lapsed (`renewal-failed`).
 * One task per `requestKey|ownerToken`; every tick is guarded, so nothing throws from a timer.
 *
 * Ticks are deadlines in a `DeadlineQueue`, not a timer per task: tasks of one interval share one timer
 * armed for the earliest, so a run that ends before its first tick arms no timer and clears none (most
 * runs: the first tick is one `heartbeatIntervalMs` away, and a run that lasts that long still renews
 * within `takeoverAfterMs`, which the stage policy keeps above the interval).
 */
import type { LeaseLossReason } from '../events/types.js';
import type { Clock } from '../ports/clock.js';
import type { FlightLogger } from '../ports/logger.js';
import { DeadlineQueue, type Deadline } from '../run/deadline-queue.js';

/** Result of one renewal attempt. */
export type RenewResult = 'ok' | 'fenced' | 'expired' | 'cancelled' | 'forgotten';

export interface HeartbeatSpec {
  requestKey: string;
  ownerToken: string;
  intervalMs: number;
  /** Renewal must happen within this long of the last success, or the lease is considered lost. */
  takeoverAfterMs: number;
  maxRunMs: number;
  stallTimeoutMs: number;
  /** Renews the lease once; rejects on a transport failure. */
  renew: () => Promise<RenewResult>;
  /** Called once, when the lease is lost. */
  onLost: (reason: LeaseLossReason) => void;
  /**
   * Fields added to this task's log lines (e.g. stage, key, epoch), or a function that builds them only when a
   * line is logged. @default { key: requestKey }
   */
  logFields?: object | (() => object);
}

export interface HeartbeatTask {
  readonly taskKey: string;
  /** Records that the owner's work made progress (resets the stall window). */
  progress(): void;
  readonly lost: LeaseLossReason | undefined;
}

class Task implements HeartbeatTask {
  readonly taskKey: string;
  lost: LeaseLossReason | undefined;
  stopped = false;
  /** The next tick, while one is scheduled. */
  next: Deadline | undefined = undefined;
  /** Runs this task's tick (one function per task, reused by every schedule). */
  readonly due: () => void;
  readonly startedAt: number;
  lastRenewedAt: number;
  lastProgressAt: number | undefined;

  constructor(
    readonly spec: HeartbeatSpec,
    private readonly clock: Clock,
    fire: (task: Task) => void,
  ) {
    this.taskKey = `${spec.requestKey}|${spec.ownerToken}`;
    this.due = () => fire(this);
    this.startedAt = clock.now();
    this.lastRenewedAt = this.startedAt;
  }

  progress(): void {
    this.lastProgressAt = this.clock.now();
  }
}

const fieldsOf = ({ logFields, requestKey }: HeartbeatSpec): object =>
  typeof logFields === 'function' ? logFields() : (logFields ?? { key: requestKey });

export class HeartbeatManager {
  private readonly tasks = new Map<string, Task>();
  private readonly fire = (task: Task): void => {
    task.next = undefined;
    this.tick(task).catch((error) => this.logger.error({ ...fieldsOf(task.spec), err: error }, 'heartbeat tick failed'));
  };

  /**
   * @param deadlines where ticks are scheduled (a single-flight shares its own).
   * @default a queue of its own on `clock`
   */
  constructor(
    private readonly clock: Clock,
    private readonly logger: FlightLogger,
    private readonly deadlines: DeadlineQueue = new DeadlineQueue(clock, logger),
  ) {}

  /** Starts renewing; the first renewal happens one interval from now. */
  start(spec: HeartbeatSpec): HeartbeatTask {
    const task = new Task(spec, this.clock, this.fire);
    this.stop(task.taskKey);
    this.tasks.set(task.taskKey, task);
    this.schedule(task);
    return task;
  }

  /** Stops a task (idempotent). */
  stop(taskKey: string | undefined): void {
    if (!taskKey) return;
    const task = this.tasks.get(taskKey);
    if (!task) return;
    task.stopped = true;
    this.deadlines.cancel(task.next);
    task.next = undefined;
    this.tasks.delete(taskKey);
  }

  /** Number of running tasks. */
  get size(): number {
    return this.tasks.size;
  }

  private schedule(task: Task): void {
    task.next = this.deadlines.schedule(task.spec.intervalMs, task.due);
  }

  private lose(task: Task, reason: LeaseLossReason): void {
    if (task.lost) return;
    task.lost = reason;
    this.stop(task.taskKey);
    try {
      task.spec.onLost(reason);
    } catch (error) {
      this.logger.error({ ...fieldsOf(task.spec), err: error }, 'lease-lost handler threw');
    }
  }

  private async tick(task: Task): Promise<void> {
    if (task.stopped) return;
    const now = this.clock.now();
    const { spec } = task;
    if (now - task.startedAt >= spec.maxRunMs) return this.lose(task, 'max-run-time');
    if (task.lastProgressAt !== undefined && now - task.lastProgressAt >= spec.stallTimeoutMs) return this.lose(task, 'stalled');
    let result: RenewResult | undefined;
    try {
      result = await spec.renew();
    } catch (error) {
      this.logger.warn({ ...fieldsOf(spec), err: error }, 'heartbeat renewal failed');
    }
    if (task.stopped) return;
    if (result === 'ok') {
      task.lastRenewedAt = this.clock.now();
    } else if (result) {
      return this.lose(task, result);
    } else if (this.clock.now() - task.lastRenewedAt >= spec.takeoverAfterMs) {
      return this.lose(task, 'renewal-failed');
    }
    this.schedule(task);
  }
}
