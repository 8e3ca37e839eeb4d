/**
 * In-process single-flight, like Go's `singleflight.Group`: concurrent calls with the same key share
 * one execution; its value or its error reaches every caller; `shared` tells whether more than one
 * caller received it; `forget` lets the next call start a fresh execution. A caller that joins a running
 * execution waits at most `waitTimeoutMs` (then `FlightWaitTimeoutError`), so nobody joins a hung call forever.
 */
import { untilAborted } from '../abort.js';
import { FlightAbortedError, FlightWaitTimeoutError } from '../errors.js';
import { systemClock } from '../ports/clock.js';
import { silentLogger } from '../ports/logger.js';
import { DeadlineQueue } from '../run/deadline-queue.js';
import { RunScope } from '../run/run-scope.js';

interface Call<T> {
  promise: Promise<T>;
  dups: number;
  /** Callers still waiting for it. */
  attached: number;
  settled: boolean;
  abandoned: ((still: () => boolean) => void) | undefined;
}

export interface LocalResult<T> {
  value: T;
  /** True when the value was handed to more than one caller. */
  shared: boolean;
  /** True for the caller whose call started the execution. */
  leader: boolean;
}

export interface LocalDoOptions {
  /** Detaches this caller only (it rejects with `FlightAbortedError`). */
  signal?: AbortSignal | undefined;
  /** Longest a caller that joins a running execution waits for it. @default no limit */
  waitTimeoutMs?: number | undefined;
  /**
   * The caller that starts the execution: called whenever every caller of it has left (its signal
   * aborted, or its wait timed out) while the execution still runs, with a check that is still true while
   * nobody joined since. Never called while a caller without a signal waits.
   */
  abandoned?: ((still: () => boolean) => void) | undefined;
}

export class LocalSingleFlight {
  private readonly calls = new Map<string, Call<unknown>>();

  /** @param deadlines where joiners' wait deadlines are kept. @default a queue on the system clock */
  constructor(private readonly deadlines = new DeadlineQueue(systemClock, silentLogger)) {}

  /**
   * Runs `fn` once per key at a time. A caller's `signal` only detaches that caller (it rejects with
   * `FlightAbortedError`); the execution goes on for the others.
   */
  do<T>(key: string, fn: () => Promise<T>, options?: LocalDoOptions): Promise<LocalResult<T>> {
    const signal = options?.signal;
    const running = this.calls.get(key) as Call<T> | undefined;
    if (running) {
      running.dups++;
      running.attached++;
      return this.leaving(running, this.join(key, running, signal, options?.waitTimeoutMs));
    }
    const started: Call<T> = {
      dups: 0,
      attached: 1,
      settled: false,
      abandoned: options?.abandoned,
      promise: undefined as unknown as Promise<T>,
    };
    this.calls.set(key, started);
    let promise: Promise<T>;
    try {
      promise = fn();
    } catch (error) {
      promise = Promise.reject(error);
    }
    started.promise = promise.then(
      (value) => {
        this.done(key, started);
        return value;
      },
      (error: unknown) => {
        this.done(key, started);
        throw error;
      },
    );
    // The leader always listens, so the execution's rejection is never unhandled even if it detaches.
    return this.leaving(started, abortable(started.promise, signal)).then((value) => ({ value, shared: started.dups > 0, leader: true }));
  }

  /** A caller's wait for `call`: when it ends before the call settled, the caller left (counted only when somebody asks). */
  private leaving<R>(call: Call<unknown>, wait: Promise<R>): Promise<R> {
    if (!call.abandoned) return wait;
    return wait.catch((error: unknown) => {
      if (!call.settled && --call.attached === 0) call.abandoned?.(() => call.attached === 0 && !call.settled);
      throw error;
    });
  }

  private async join<T>(
    key: string,
    call: Call<T>,
    signal: AbortSignal | undefined,
    waitTimeoutMs: number | undefined,
  ): Promise<LocalResult<T>> {
    if (waitTimeoutMs === undefined) return { value: await abortable(call.promise, signal), shared: true, leader: false };
    const wait = new RunScope();
    wait.limit(
      this.deadlines,
      waitTimeoutMs,
      () => new FlightWaitTimeoutError(`waited ${waitTimeoutMs} ms for a run of this node`, { context: { key } }),
    );
    try {
      return { value: await wait.race(abortable(call.promise, signal)), shared: true, leader: false };
    } finally {
      wait.end(this.deadlines);
    }
  }

  /** The execution `call` of `key` settled: the next call starts a new one (unless `key` was forgotten meanwhile). */
  private done(key: string, call: Call<unknown>): void {
    call.settled = true;
    if (this.calls.get(key) === call) this.calls.delete(key);
  }

  /** Forgets the in-flight execution of `key`: the next call starts a new one. */
  forget(key: string): void {
    this.calls.delete(key);
  }

  has(key: string): boolean {
    return this.calls.has(key);
  }

  /** Number of keys with an execution in flight. */
  get size(): number {
    return this.calls.size;
  }
}

/** Races `promise` with `signal`: rejects with `FlightAbortedError` when the signal aborts first. */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  return untilAborted(promise, signal).catch((error: unknown) => {
    if (signal.aborted && error === signal.reason) throw new FlightAbortedError('the caller aborted', { cause: signal.reason });
    throw error;
  });
}
