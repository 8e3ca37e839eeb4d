/**
 * The call guard: timeout, bulkhead, circuit breaker and retry
 * around the supplier, per stage, built on cockatiel 3 (the last major that runs on Node 20).
 *
 * A stage with no retry, breaker or bulkhead (a common setting, and the bench's) needs none of
 * cockatiel's per-call machinery: its timeout is a deadline of the run (`RunScope.limit`), checked by
 * one shared timer, and the supplier's signal is created only if the supplier reads it.
 */
import {
  bulkhead,
  circuitBreaker,
  ConsecutiveBreaker,
  ExponentialBackoff,
  handleWhen,
  noop,
  retry,
  timeout,
  TimeoutStrategy,
  wrap,
  type IPolicy,
} from 'cockatiel';
import { systemClock } from '../ports/clock.js';
import { silentLogger } from '../ports/logger.js';
import { FlightRunTimeoutError } from '../errors.js';
import { classifyError } from '../failure/classify.js';
import type { StagePolicy } from '../policy/stage-policy.js';
import { DeadlineQueue } from '../run/deadline-queue.js';
import type { RunScope } from '../run/run-scope.js';

export interface Guard {
  /** Runs `fn` under the stage's policies; `fn` receives a signal that aborts on timeout or when `signal` aborts. */
  execute<T>(fn: (signal: AbortSignal) => Promise<T>, signal: AbortSignal): Promise<T>;
  /**
   * Runs one flight's supplier under the stage's policies inside `run`. `attempt` receives the attempt's
   * own signal, or `undefined` when the attempt is the whole run (then `run.signal` is its signal). The
   * returned promise also rejects as soon as `run` is abandoned, so a bulkhead slot is never held by a
   * supplier that ignores its signal. `withRetry: false` leaves the stage's retry layer out for this run
   * (its breaker, bulkhead and timeout still apply): the supplier is attempted once.
   */
  run<T>(attempt: (signal: AbortSignal | undefined) => Promise<T> | T, run: RunScope, withRetry?: boolean): Promise<T>;
}

/** Builds the guard of one stage. Retries only failures the stage counts as retryable. */
export function createGuard(policy: StagePolicy, deadlines = new DeadlineQueue(systemClock, silentLogger)): Guard {
  const { guard } = policy;
  const isRetryable = (error: unknown) => {
    const type = policy.classify?.(error) ?? classifyError(error);
    return type !== 'OVERLOAD' && policy.retryableFailures.includes(type);
  };
  // Retry stays apart so a run may leave it out (`run(…, withRetry = false)`) and still share the others' state.
  const retryLayer: IPolicy | undefined =
    guard.retry && guard.retry.maxAttempts > 1
      ? retry(handleWhen(isRetryable), {
          maxAttempts: guard.retry.maxAttempts - 1,
          backoff: new ExponentialBackoff({ initialDelay: guard.retry.initialDelayMs, maxDelay: guard.retry.maxDelayMs }),
        })
      : undefined;
  const layers: IPolicy[] = [];
  if (guard.circuitBreaker) {
    layers.push(
      circuitBreaker(handleWhen(isRetryable), {
        halfOpenAfter: guard.circuitBreaker.halfOpenAfterMs,
        breaker: new ConsecutiveBreaker(guard.circuitBreaker.consecutiveFailures),
      }),
    );
  }
  if (guard.bulkhead) layers.push(bulkhead(guard.bulkhead.limit, guard.bulkhead.queue));
  /** No breaker and no bulkhead: an attempt without retry needs none of cockatiel's per-call machinery. */
  const plainOnce = layers.length === 0;
  const singleAttempt = plainOnce && !retryLayer;
  if (guard.timeoutMs > 0) layers.push(timeout(guard.timeoutMs, TimeoutStrategy.Aggressive));
  const once: IPolicy = layers.length ? wrap(...layers) : noop;
  const composed: IPolicy = retryLayer ? wrap(retryLayer, ...layers) : once;
  const timedOut = () =>
    new FlightRunTimeoutError(`stage ${policy.stage}: the supplier did not settle within guard.timeoutMs (${guard.timeoutMs} ms)`, {
      context: { stage: policy.stage, timeoutMs: guard.timeoutMs },
    });
  return {
    execute: <T>(fn: (signal: AbortSignal) => Promise<T>, signal: AbortSignal) =>
      composed.execute(({ signal: inner }: { signal: AbortSignal }) => fn(inner), signal) as Promise<T>,
    run<T>(attempt: (signal: AbortSignal | undefined) => Promise<T> | T, run: RunScope, withRetry = true): Promise<T> {
      if (withRetry ? singleAttempt : plainOnce) {
        if (guard.timeoutMs > 0) run.limit(deadlines, guard.timeoutMs, timedOut);
        try {
          return Promise.resolve(attempt(undefined));
        } catch (error) {
          return Promise.reject(error);
        }
      }
      return (withRetry ? composed : once).execute(
        ({ signal }: { signal: AbortSignal }) => run.race(new Promise<T>((resolve) => resolve(attempt(signal)))),
        run.signal,
      ) as Promise<T>;
    },
  };
}
