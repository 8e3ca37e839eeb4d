/**
 * Racing work against an AbortSignal: the one helper every layer uses when a caller (or a lease) may
 * stop waiting for work that goes on without it.
 */

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
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
