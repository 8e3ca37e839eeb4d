/**
 * Racing work against an AbortSignal: the one helper every layer uses when a caller (or a lease) may
 * stop waiting for work that goes on without it.
 *
 * A signal gets one `abort` listener of ours, however many races it carries: the races wait in a set of
 * the signal's own. A long-lived signal (an HTTP/1 connection's, carrying thousands of requests; an
 * application's shutdown signal) carries races one after another, and adding and removing an EventTarget
 * listener per race cost more than the race itself (Node checks and counts its listeners on every add).
 */

/** One pending race: rejected when its signal aborts first. */
type Reject = (reason: unknown) => void;

/** The races pending on one signal, and the signal's one listener that rejects them all. */
class SignalRaces {
  readonly pending = new Set<Reject>();

  constructor(private readonly signal: AbortSignal) {}

  handleEvent(): void {
    const { reason } = this.signal;
    for (const reject of this.pending) reject(reason);
    this.pending.clear();
  }
}

/** Races per signal; a signal no longer referenced elsewhere takes its races' set and listener with it. */
const racesOf = new WeakMap<AbortSignal, SignalRaces>();
const ONCE = { once: true } as const;

function racesOn(signal: AbortSignal): SignalRaces {
  let races = racesOf.get(signal);
  if (!races) {
    races = new SignalRaces(signal);
    racesOf.set(signal, races);
    signal.addEventListener('abort', races, ONCE);
  }
  return races;
}

/**
 * Settles with `promise`, or rejects with the signal's reason as soon as it aborts. The promise is
 * abandoned, not cancelled; its later rejection is handled here, so it is never unhandled.
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(signal.reason);
  }
  const { pending } = racesOn(signal);
  return new Promise<T>((resolve, reject) => {
    pending.add(reject);
    promise.then(
      (value) => {
        pending.delete(reject);
        resolve(value);
      },
      (error) => {
        pending.delete(reject);
        reject(error);
      },
    );
  });
}
