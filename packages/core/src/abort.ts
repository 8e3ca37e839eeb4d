/**
 * Racing work against an AbortSignal: the one helper every layer uses when a caller (or a lease) may
 * stop waiting for work that goes on without it.
 *
 * A signal raced again and again keeps one `abort` listener of ours for all its races, which wait in a set
 * of the signal's own: a long-lived signal (an HTTP/1 connection's, carrying thousands of requests; an
 * application's shutdown signal) carries races one after another, and adding and removing an EventTarget
 * listener per race cost more than the race itself (Node checks and counts its listeners on every add).
 * A signal raced once (`AbortSignal.timeout(…)` made for one call) loses its listener when its race
 * settles, as before: a listener left on a timeout signal would keep it alive until it fires.
 */

/** One pending race: rejected when its signal aborts first. */
type Reject = (reason: unknown) => void;

/** The races pending on one signal, and the signal's one listener that rejects them all. */
class SignalRaces {
  readonly pending = new Set<Reject>();
  /** Races this signal has carried: from the second on, the listener stays between them. */
  uses = 0;
  listening = false;

  constructor(readonly signal: AbortSignal) {}

  handleEvent(): void {
    this.listening = false;
    const { reason } = this.signal;
    for (const reject of this.pending) reject(reason);
    this.pending.clear();
  }

  /** A race of this signal settled. */
  settled(reject: Reject): void {
    this.pending.delete(reject);
    if (this.uses === 1 && this.pending.size === 0 && this.listening) {
      this.listening = false;
      this.signal.removeEventListener('abort', this);
    }
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
  }
  races.uses++;
  if (!races.listening) {
    races.listening = true;
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
  const races = racesOn(signal);
  return new Promise<T>((resolve, reject) => {
    races.pending.add(reject);
    promise.then(
      (value) => {
        races.settled(reject);
        resolve(value);
      },
      (error) => {
        races.settled(reject);
        reject(error);
      },
    );
  });
}
