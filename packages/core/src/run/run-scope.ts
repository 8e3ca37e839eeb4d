/**
 * The life of one run (or one wait): whether it was abandoned and why, with the AbortSignal handed to the
 * supplier created only when someone reads it. Most runs finish without anyone aborting them, so the
 * common path allocates no AbortController, no event listener and no timer (its deadline lives in a
 * shared `DeadlineQueue`).
 */
import type { Deadline, DeadlineQueue } from './deadline-queue.js';

export class RunScope {
  private controller: AbortController | undefined = undefined;
  private listener: ((reason: unknown) => void) | undefined = undefined;
  private listeners: ((reason: unknown) => void)[] | undefined = undefined;
  private deadline: Deadline | undefined = undefined;
  private deadlineAt = 0;
  private abandoned = false;
  private why: unknown = undefined;

  /** True once the run was abandoned (deadline, lost lease, cancel, close). */
  get aborted(): boolean {
    return this.abandoned;
  }

  /** Why it was abandoned (an Error), or undefined. */
  get reason(): unknown {
    return this.why;
  }

  /** The signal given to suppliers; created on first use (already aborted when the run was). */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.abandoned) this.controller.abort(this.why);
    }
    return this.controller.signal;
  }

  /**
   * A scope inside this one (one attempt of a run, with a deadline of its own): abandoned with this one, or
   * on its own without abandoning this one.
   */
  child(): RunScope {
    const child = new RunScope();
    if (this.abandoned) child.abort(this.why);
    else this.onAbort((reason) => child.abort(reason));
    return child;
  }

  /** Abandons the run (first reason wins): aborts the signal if it exists and rejects every `race`. */
  abort(reason: unknown): void {
    if (this.abandoned) return;
    this.abandoned = true;
    this.why = reason;
    this.controller?.abort(reason);
    const { listener, listeners } = this;
    this.listener = this.listeners = undefined;
    listener?.(reason);
    if (listeners) for (const each of listeners) each(reason);
  }

  /**
   * Abandons the run with `reason()` after `delayMs`, unless it ends first. A scope keeps one deadline:
   * the earlier of this one and any set before.
   */
  limit(queue: DeadlineQueue, delayMs: number, reason: () => unknown): void {
    const now = queue.now();
    if (this.deadline && this.deadlineAt <= now + delayMs) return;
    queue.cancel(this.deadline);
    this.deadlineAt = now + delayMs;
    this.deadline = queue.schedule(delayMs, () => this.abort(reason()), now);
  }

  /** Ends the scope: cancels its deadline. Idempotent. */
  end(queue: DeadlineQueue): void {
    queue.cancel(this.deadline);
    this.deadline = undefined;
  }

  /**
   * Settles with `promise`, or rejects with the abort reason as soon as the run is abandoned. The promise
   * is abandoned, not cancelled; its later rejection is handled here, so it is never unhandled.
   */
  race<T>(promise: Promise<T>): Promise<T> {
    if (this.abandoned) {
      promise.catch(() => {});
      return Promise.reject(this.why);
    }
    return new Promise<T>((resolve, reject) => {
      this.onAbort(reject);
      promise.then(resolve, reject);
    });
  }

  /** Calls `listener` once with the reason if the run is abandoned. */
  private onAbort(listener: (reason: unknown) => void): void {
    if (this.listener === undefined) this.listener = listener;
    else (this.listeners ??= []).push(listener);
  }
}
