/**
 * The stage guard's timeout, circuit breaker, retry and bulkhead as a stage with all of them (the default
 * policy's shape, shorter times) runs them: the timeout is per attempt, a timed-out attempt counts for the
 * breaker and is retried, the breaker opens, half-opens and closes on retryable failures only, an
 * abandoned run is neither retried nor started from the bulkhead's queue, and the common path creates no
 * AbortController and no timer per call.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { FlightRunTimeoutError, type StagePolicyInput } from '@flight/core';
import { classifyError } from '../src/failure/classify.js';
import { createGuard } from '../src/guard/guard.js';
import { resolveStagePolicy } from '../src/policy/stage-policy.js';
import { RunScope } from '../src/run/run-scope.js';
import { never, singleFlights } from './helpers.js';

const ALL_LAYERS: StagePolicyInput = {
  guard: {
    timeoutMs: 60,
    retry: { maxAttempts: 2, initialDelayMs: 1, maxDelayMs: 1 },
    circuitBreaker: { consecutiveFailures: 2, halfOpenAfterMs: 150 },
    bulkhead: { limit: 4, queue: 4 },
  },
};
const status = (code: number) => Object.assign(new Error(`status ${code}`), { status: code });

const make = singleFlights();
const local = (defaults: StagePolicyInput) => make({ mode: 'local', defaults: { ...defaults, l1: { enabled: false } } });

describe('guard with retry, circuit breaker, bulkhead and timeout', () => {
  it('times out each attempt on its own: the retry gets a fresh signal and its own timeout, the run goes on', async () => {
    const sf = local(ALL_LAYERS);
    const signals: AbortSignal[] = [];
    const { value } = await sf.execute('eval', randomUUID(), async ({ signal }) => {
      signals.push(signal);
      if (signals.length === 1) return never();
      await sleep(40); // within the second attempt's own 60 ms, though 100 ms after the run started
      return 'second';
    });
    expect(value).toBe('second');
    expect(signals).toHaveLength(2);
    expect(signals[0]!.aborted).toBe(true);
    expect(signals[0]!.reason).toBeInstanceOf(FlightRunTimeoutError);
    expect(signals[1]!.aborted).toBe(false);
  });

  it('a call whose attempts all time out fails as TIMEOUT after maxAttempts', async () => {
    const sf = local({ guard: { ...ALL_LAYERS.guard, circuitBreaker: false } });
    let attempts = 0;
    const started = Date.now();
    const error = await sf.execute('eval', randomUUID(), () => (attempts++, never())).catch((e) => e);
    expect(error).toMatchObject({ errorType: 'TIMEOUT', errorCode: 'E_FLIGHT_RUN_TIMEOUT' });
    expect(attempts).toBe(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(115);
  });

  it('timed-out attempts open the breaker; it rejects as OVERLOAD without running, half-opens, and a success closes it', async () => {
    const sf = local(ALL_LAYERS);
    let runs = 0;
    // One call, two attempts, both time out: two consecutive retryable failures.
    expect(await sf.execute('eval', randomUUID(), () => (runs++, never())).catch((e) => e)).toMatchObject({ errorType: 'TIMEOUT' });
    expect(runs).toBe(2);
    const open = await sf.execute('eval', randomUUID(), async () => (runs++, 'x')).catch((e) => e);
    expect(open).toMatchObject({ errorType: 'OVERLOAD' });
    expect(runs).toBe(2);
    await sleep(170);
    // Half-open: the test call runs; its success closes the circuit.
    expect(await sf.execute('eval', randomUUID(), async () => (runs++, 'probe'))).toMatchObject({ value: 'probe' });
    expect(await sf.execute('eval', randomUUID(), async () => (runs++, 'closed'))).toMatchObject({ value: 'closed' });
    expect(runs).toBe(4);
  });

  it('a failed half-open test opens the breaker again; a success in between resets the count', async () => {
    const sf = local({ guard: { ...ALL_LAYERS.guard, retry: false } });
    const fail = () => Promise.reject(status(502));
    await sf.execute('eval', randomUUID(), fail).catch(() => {});
    await sf.execute('eval', randomUUID(), async () => 'ok'); // resets the consecutive count
    await sf.execute('eval', randomUUID(), fail).catch(() => {});
    expect(await sf.execute('eval', randomUUID(), async () => 'still closed')).toMatchObject({ value: 'still closed' });
    await sf.execute('eval', randomUUID(), fail).catch(() => {});
    await sf.execute('eval', randomUUID(), fail).catch(() => {});
    expect(await sf.execute('eval', randomUUID(), async () => 'x').catch((e) => e)).toMatchObject({ errorType: 'OVERLOAD' });
    await sleep(170);
    expect(await sf.execute('eval', randomUUID(), fail).catch((e) => e)).toMatchObject({ errorType: 'PROVIDER' });
    expect(await sf.execute('eval', randomUUID(), async () => 'x').catch((e) => e)).toMatchObject({ errorType: 'OVERLOAD' });
  });

  it('failures the stage does not retry never open the breaker', async () => {
    const sf = local(ALL_LAYERS);
    let runs = 0;
    for (let i = 0; i < 4; i++) {
      const error = await sf.execute('eval', randomUUID(), () => (runs++, Promise.reject(status(422)))).catch((e) => e);
      expect(error).toMatchObject({ errorType: 'VALIDATION' });
    }
    expect(runs).toBe(4); // not retried either
    expect(await sf.execute('eval', randomUUID(), async () => 'closed')).toMatchObject({ value: 'closed' });
  });

  it('an abandoned run is not retried, and its attempt queued in the bulkhead never starts', async () => {
    const policy = resolveStagePolicy('g', {
      guard: {
        timeoutMs: 0,
        circuitBreaker: false,
        retry: { maxAttempts: 3, initialDelayMs: 1, maxDelayMs: 1 },
        bulkhead: { limit: 1, queue: 1 },
      },
    });
    const guard = createGuard(policy);
    let attempts = 0;
    const lost = new RunScope();
    const failed = await guard
      .run(() => {
        attempts++;
        lost.abort(new Error('lease lost'));
        throw status(502);
      }, lost)
      .catch((e: Error) => e.message);
    expect(failed).toBe('lease lost');
    await sleep(20);
    expect(attempts).toBe(1);

    const holder = new RunScope();
    const held = guard.run(never, holder).catch((e: Error) => e.message);
    const queued = new RunScope();
    let started = false;
    const waiting = guard.run(() => (started = true), queued).catch((e: unknown) => e);
    queued.abort(new Error('caller gone'));
    holder.abort(new Error('done'));
    expect(await held).toBe('done');
    // Dequeued once the slot is free: cockatiel's bulkhead sees the run abandoned and cancels it.
    expect(classifyError(await waiting)).toBe('TIMEOUT');
    expect(started).toBe(false);
    // The slot is free again.
    expect(await guard.run(() => 'next', new RunScope())).toBe('next');
  });

  it('creates no AbortController and no timer per call when the supplier ignores its signal', async () => {
    const sf = local({});
    await sf.execute('eval', 'warm-up', async () => 0);
    const { AbortController: Original } = globalThis;
    const originalSetTimeout = globalThis.setTimeout;
    let controllers = 0;
    let timers = 0;
    globalThis.AbortController = class extends Original {
      constructor() {
        super();
        controllers++;
      }
    };
    globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => (timers++, originalSetTimeout(...args))) as typeof setTimeout;
    try {
      const values = await Promise.all(Array.from({ length: 50 }, (_, i) => sf.execute('eval', randomUUID(), async () => i)));
      expect(values.map((outcome) => outcome.value)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    } finally {
      globalThis.AbortController = Original;
      globalThis.setTimeout = originalSetTimeout;
    }
    expect(controllers).toBe(0);
    expect(timers).toBeLessThanOrEqual(2); // the deadline lanes' timers, not one per call
    // A supplier that reads its signal gets one, live.
    expect(await sf.execute('eval', randomUUID(), async ({ signal }) => signal.aborted)).toMatchObject({ value: false });
  });
});
