/**
 * The call guard (the seed's `AiCallGuardService`): timeout, bulkhead, circuit breaker and retry
 * around the supplier, per stage, built on cockatiel 3 (the last major that runs on Node 20).
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
import { classifyError } from '../failure/classify.js';
import type { StagePolicy } from '../policy/stage-policy.js';

export interface Guard {
  /** Runs `fn` under the stage's policies; `fn` receives a signal that aborts on timeout or when `signal` aborts. */
  execute<T>(fn: (signal: AbortSignal) => Promise<T>, signal: AbortSignal): Promise<T>;
}

/** Builds the guard of one stage. Retries only failures the stage counts as retryable. */
export function createGuard(policy: StagePolicy): Guard {
  const { guard } = policy;
  const isRetryable = (error: unknown) => {
    const type = policy.classify?.(error) ?? classifyError(error);
    return type !== 'OVERLOAD' && policy.retryableFailures.includes(type);
  };
  const layers: IPolicy[] = [];
  if (guard.retry && guard.retry.maxAttempts > 1) {
    layers.push(
      retry(handleWhen(isRetryable), {
        maxAttempts: guard.retry.maxAttempts - 1,
        backoff: new ExponentialBackoff({ initialDelay: guard.retry.initialDelayMs, maxDelay: guard.retry.maxDelayMs }),
      }),
    );
  }
  if (guard.circuitBreaker) {
    layers.push(
      circuitBreaker(handleWhen(isRetryable), {
        halfOpenAfter: guard.circuitBreaker.halfOpenAfterMs,
        breaker: new ConsecutiveBreaker(guard.circuitBreaker.consecutiveFailures),
      }),
    );
  }
  if (guard.bulkhead) layers.push(bulkhead(guard.bulkhead.limit, guard.bulkhead.queue));
  if (guard.timeoutMs > 0) layers.push(timeout(guard.timeoutMs, TimeoutStrategy.Aggressive));
  const composed: IPolicy = layers.length ? wrap(...layers) : noop;
  return {
    execute: <T>(fn: (signal: AbortSignal) => Promise<T>, signal: AbortSignal) =>
      composed.execute(({ signal: inner }: { signal: AbortSignal }) => fn(inner), signal) as Promise<T>,
  };
}
