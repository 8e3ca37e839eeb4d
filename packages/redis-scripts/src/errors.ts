/**
 * Every failure of a Redis call becomes a typed @flight error here, in one place:
 * - errors raised by our Lua scripts carry an `E_FLIGHT_*` code as their first word;
 * - a missed deadline, a closed connection or any other client/server error is a
 *   `FlightCoordinationError` (what hybrid mode falls back on).
 */
import { FlightCoordinationError, FlightError, FlightErrorCodes, type FlightErrorContext } from '@flight/core';
import { DeadlineQueue, silentLogger, systemClock } from '@flight/core/adapter';

/**
 * The Redis server is older than 7.0: the scripts need `#!lua` flags and sharded pub/sub. Raised by the
 * first call of a coordinator (never a fallback case: hybrid mode throws it too).
 */
export class FlightRedisVersionError extends FlightError {
  static override readonly code = 'E_FLIGHT_REDIS_VERSION';
}

/** Thrown by `withDeadline` when Redis does not answer in time. */
export class DeadlineExceeded extends Error {
  constructor(readonly timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function isNoScript(error: unknown): boolean {
  return messageOf(error).includes('NOSCRIPT');
}

export function toFlightRedisError(error: unknown, operation: string, context: FlightErrorContext = {}): FlightError {
  if (error instanceof FlightError) return error;
  const message = messageOf(error);
  const code = /^(?:ERR )?(E_FLIGHT_[A-Z_]+)\b/.exec(message)?.[1];
  if (code && code in FlightErrorCodes && code !== 'E_FLIGHT_EXECUTION' && code !== 'E_FLIGHT_REPLICATION') {
    const ErrorClass = FlightErrorCodes[code as Exclude<keyof typeof FlightErrorCodes, 'E_FLIGHT_EXECUTION' | 'E_FLIGHT_REPLICATION'>];
    return new ErrorClass(`${operation}: ${message}`, { cause: error, context });
  }
  if (error instanceof DeadlineExceeded) {
    return new FlightCoordinationError(`Redis did not answer ${operation} within ${error.timeoutMs} ms`, {
      cause: error,
      context,
      outcomeUnknown: true,
    });
  }
  return new FlightCoordinationError(`Redis ${operation} failed: ${message}`, { cause: error, context });
}

/**
 * Deadlines of every Redis call in the process: one lane (and at most one timer) per deadline length
 * instead of a `setTimeout` armed and cleared per command. On the monotonic clock: a step of the wall
 * clock neither fires nor delays them.
 */
const deadlines = new DeadlineQueue({ ...systemClock, now: () => performance.now() }, silentLogger);

/** Settles by `timeoutMs` at the latest: a blackholed Redis never leaves the caller pending. */
export function withDeadline<T>(promise: Promise<T>, timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const deadline = deadlines.schedule(timeoutMs, () => reject(new DeadlineExceeded(timeoutMs)));
    promise.then(
      (value) => {
        deadlines.cancel(deadline);
        resolve(value);
      },
      (error: unknown) => {
        deadlines.cancel(deadline);
        reject(error);
      },
    );
  });
}

/** Closes a connection gracefully, or forcibly when the server does not answer within `timeoutMs`. */
export async function closeWithin(timeoutMs: number, graceful: () => Promise<unknown>, force: () => unknown): Promise<void> {
  try {
    await withDeadline(graceful(), timeoutMs);
  } catch {
    try {
      await force();
    } catch {
      // already closed
    }
  }
}
