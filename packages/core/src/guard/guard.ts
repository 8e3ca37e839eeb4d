/**
 * The call guard: timeout, bulkhead, circuit breaker and retry around
 * the supplier, per stage. Retry with its backoff, the circuit breaker and the bulkhead are cockatiel 3's
 * (the last major that runs on Node 20); the timeout is a deadline on the shared `DeadlineQueue` (one
 * timer per deadline length) instead of cockatiel's timeout policy, which costs a timer, two
 * AbortControllers and a DOMException per call.
 *
 * Per call, the guard allocates no AbortController and no timer: an attempt's signal is created only if
 * the supplier reads it, and cockatiel's layers learn whether the run was abandoned from the run itself.
 */
import { bulkhead, circuitBreaker, ConsecutiveBreaker, ExponentialBackoff, handleWhen, retry, wrap, type IPolicy } from 'cockatiel';
import { systemClock } from '../ports/clock.js';
import { silentLogger } from '../ports/logger.js';
import { FlightRunTimeoutError } from '../errors.js';
import { classifyError } from '../failure/classify.js';
import type { StagePolicy } from '../policy/stage-policy.js';
import { DeadlineQueue } from '../run/deadline-queue.js';
import { RunScope } from '../run/run-scope.js';

export interface Guard {
  /** Runs `fn` under the stage's policies; `fn` receives a signal that aborts on timeout or when `signal` aborts. */
  execute<T>(fn: (signal: AbortSignal) => Promise<T>, signal: AbortSignal): Promise<T>;
  /**
   * Runs one flight's supplier under the stage's policies inside `run`. `attempt` receives the scope of
   * the attempt: `run` itself when the attempt is the whole run, else a scope of its own (a stage with
   * retries: each attempt has its own timeout) that is abandoned with `run`; the supplier's signal is that
   * scope's. The returned promise also rejects as soon as `run` is abandoned, so a bulkhead slot is never
   * held by a supplier that ignores its signal. `withRetry: false` leaves the stage's retry layer out for
   * this run (its breaker, bulkhead and timeout still apply): the supplier is attempted once.
   */
  run<T>(attempt: (scope: RunScope) => Promise<T> | T, run: RunScope, withRetry?: boolean): Promise<T>;
}

/**
 * What cockatiel's retry, circuit breaker and bulkhead read of the signal they are given (3.x): `aborted`
 * only (no retry once the run is abandoned, a queued attempt of an abandoned run never starts). The run
 * scope answers it itself; a real AbortSignal would cost an AbortController per call.
 */
const abandonment = (run: RunScope): AbortSignal => run as Pick<AbortSignal, 'aborted'> as AbortSignal;

function start<T>(attempt: (scope: RunScope) => Promise<T> | T, scope: RunScope): Promise<T> {
  try {
    return Promise.resolve(attempt(scope));
  } catch (error) {
    return Promise.reject(error);
  }
}

/** Builds the guard of one stage. Retries only failures the stage counts as retryable. */
export function createGuard(policy: StagePolicy, deadlines = new DeadlineQueue(systemClock, silentLogger)): Guard {
  const { guard } = policy;
  const isRetryable = (error: unknown) => {
    const type = policy.classify?.(error) ?? classifyError(error);
    return type !== 'OVERLOAD' && policy.retryableFailures.includes(type);
  };
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
  /** Breaker and bulkhead, outermost first; undefined when the stage has neither. */
  const once: IPolicy | undefined = layers.length > 1 ? wrap(...layers) : layers[0];
  // Retry stays apart so a run may leave it out (`run(…, withRetry = false)`) and still share the others' state.
  const retryLayer: IPolicy | undefined =
    guard.retry && guard.retry.maxAttempts > 1
      ? retry(handleWhen(isRetryable), {
          maxAttempts: guard.retry.maxAttempts - 1,
          backoff: new ExponentialBackoff({ initialDelay: guard.retry.initialDelayMs, maxDelay: guard.retry.maxDelayMs }),
        })
      : undefined;
  const retried = retryLayer && once ? wrap(retryLayer, ...layers) : retryLayer;
  const timedOut = () =>
    new FlightRunTimeoutError(`stage ${policy.stage}: the supplier did not settle within guard.timeoutMs (${guard.timeoutMs} ms)`, {
      context: { stage: policy.stage, timeoutMs: guard.timeoutMs },
    });

  /** The attempt is the whole run: the stage's timeout is a deadline of the run, set as the attempt starts. */
  function attemptRun<T>(attempt: (scope: RunScope) => Promise<T> | T, run: RunScope): Promise<T> {
    if (guard.timeoutMs > 0) run.limit(deadlines, guard.timeoutMs, timedOut);
    return start(attempt, run);
  }

  /** One of several attempts: a scope of its own with its own timeout, abandoned with the run. */
  function attemptOwn<T>(attempt: (scope: RunScope) => Promise<T> | T, run: RunScope): Promise<T> {
    const scope = run.child();
    if (guard.timeoutMs > 0) scope.limit(deadlines, guard.timeoutMs, timedOut);
    const outcome = scope.race(start(attempt, scope));
    const end = () => scope.end(deadlines);
    outcome.then(end, end);
    return outcome;
  }

  function runGuarded<T>(attempt: (scope: RunScope) => Promise<T> | T, run: RunScope, withRetry = true): Promise<T> {
    if (withRetry && retried) return retried.execute(() => attemptOwn(attempt, run), abandonment(run)) as Promise<T>;
    if (!once) return attemptRun(attempt, run);
    return once.execute(() => run.race(attemptRun(attempt, run)), abandonment(run)) as Promise<T>;
  }

  return {
    execute<T>(fn: (signal: AbortSignal) => Promise<T>, signal: AbortSignal): Promise<T> {
      const scope = new RunScope();
      const abort = () => scope.abort(signal.reason);
      if (signal.aborted) abort();
      else signal.addEventListener('abort', abort, { once: true });
      const outcome = scope.race(runGuarded((attempt) => fn(attempt.signal), scope));
      const end = () => {
        signal.removeEventListener('abort', abort);
        scope.end(deadlines);
      };
      outcome.then(end, end);
      return outcome;
    },
    run: runGuarded,
  };
}
