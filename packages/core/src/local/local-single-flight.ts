/**
 * In-process single-flight, like Go's `singleflight.Group`: concurrent calls with the same key share
 * one execution; its value or its error reaches every caller; `shared` tells whether more than one
 * caller received it; `forget` lets the next call start a fresh execution.
 */
import { untilAborted } from '../abort.js';
import { FlightAbortedError } from '../errors.js';

interface Call<T> {
  promise: Promise<T>;
  dups: number;
}

export interface LocalResult<T> {
  value: T;
  /** True when the value was handed to more than one caller. */
  shared: boolean;
  /** True for the caller whose call started the execution. */
  leader: boolean;
}

export class LocalSingleFlight {
  private readonly calls = new Map<string, Call<unknown>>();

  /**
   * Runs `fn` once per key at a time. A caller's `signal` only detaches that caller (it rejects with
   * `FlightAbortedError`); the execution goes on for the others.
   */
  async do<T>(key: string, fn: () => Promise<T>, options: { signal?: AbortSignal | undefined } = {}): Promise<LocalResult<T>> {
    let call = this.calls.get(key) as Call<T> | undefined;
    const leader = !call;
    if (call) {
      call.dups++;
    } else {
      const started: Call<T> = { dups: 0, promise: undefined as unknown as Promise<T> };
      started.promise = Promise.resolve()
        .then(fn)
        .finally(() => {
          if (this.calls.get(key) === started) this.calls.delete(key);
        });
      // The execution may outlive every caller; its rejection must never be unhandled.
      started.promise.catch(() => {});
      this.calls.set(key, started);
      call = started;
    }
    const value = await abortable(call.promise, options.signal);
    return { value, shared: call.dups > 0, leader };
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
