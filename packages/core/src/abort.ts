/**
 * Racing work against an AbortSignal: the one helper every layer uses when a caller (or a lease) may
 * stop waiting for work that goes on without it.
 */

/**
 * The abort listener of one race (an EventTarget listener object): no closure per race, which a keep-names
 * build would also give a `name` property each time.
 */
class AbortRace {
  constructor(
    private readonly signal: AbortSignal,
    private readonly reject: (reason: unknown) => void,
  ) {}

  handleEvent(): void {
    this.reject(this.signal.reason);
  }
}

const ONCE = { once: true } as const;

/**
 * Settles with `promise`, or rejects with the signal's reason as soon as it aborts. The promise is
 * abandoned, not cancelled; its later rejection is handled here, so it is never unhandled.
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const race = new AbortRace(signal, reject);
    signal.addEventListener('abort', race, ONCE);
    promise.then(
      (value) => {
        signal.removeEventListener('abort', race);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener('abort', race);
        reject(error);
      },
    );
  });
}
