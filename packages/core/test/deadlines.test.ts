/**
 * Issue 11.3: every run and every wait has a deadline in every mode, even with `guard.timeoutMs: 0` and a
 * supplier that never settles and ignores its signal; an abandoned run releases its session lock and its
 * bulkhead slot at once.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  createMemoryCoordinator,
  FlightExecutionError,
  FlightRunTimeoutError,
  FlightWaitTimeoutError,
  type StagePolicyInput,
} from '@flight/core';
import { downCoordinator, figure, never, singleFlights } from './helpers.js';

const NO_TIMEOUT: StagePolicyInput = {
  heartbeatIntervalMs: 500,
  takeoverAfterMs: 800,
  pollIntervalMs: 50,
  guard: { timeoutMs: 0, retry: false, circuitBreaker: false, bulkhead: { limit: 1, queue: 0 } },
};
const HEAVY: StagePolicyInput = { sessionLock: { enabled: true, ttlMs: 300, waitMs: 100 } };

const make = singleFlights();

describe('deadlines in every mode (guard.timeoutMs: 0, a supplier that never settles)', () => {
  it('distributed: once the lease is lost the session lock and the bulkhead slot are released at once', async () => {
    const sf = make({
      coordinator: createMemoryCoordinator(),
      mode: 'distributed',
      defaults: NO_TIMEOUT,
      stages: { heavy: { ...HEAVY, maxRunMs: 400 } },
    });
    const started = Date.now();
    const hung = await sf.execute('heavy', 's-1:cv.pdf', never, { sessionId: 's-1' }).catch((e) => e);
    const abandonedAt = Date.now();
    expect(hung).toMatchObject({ errorType: 'TIMEOUT', errorCode: 'E_FLIGHT_LEASE_LOST' });
    // The same session's next heavy job gets the lock (waitMs 100) although the hung supplier still "runs".
    expect(await sf.execute('heavy', 's-1:cover.pdf', async () => 'cover', { sessionId: 's-1' })).toMatchObject({
      value: 'cover',
      role: 'owner',
    });
    const lockedAgainMs = Date.now() - abandonedAt;
    // The stage's only bulkhead slot was given back too.
    expect(await sf.execute('heavy', 's-2:cv.pdf', async () => 'other', { sessionId: 's-2' })).toMatchObject({ value: 'other' });
    figure('11.3 distributed', { abandonedAfterMs: abandonedAt - started, sameSessionRanAfterMs: lockedAgainMs, bulkheadSlotFree: true });
  });

  it('local: the run is abandoned at maxRunMs, a joiner waits at most waitTimeoutMs, the next caller runs afresh', async () => {
    const sf = make({ mode: 'local', defaults: { ...NO_TIMEOUT, maxRunMs: 300, waitTimeoutMs: 100 } });
    const key = randomUUID();
    const started = Date.now();
    const leader = sf.execute('eval', key, never).catch((e) => e);
    const joiner = sf.execute('eval', key, never).catch((e) => e);
    expect(await joiner).toBeInstanceOf(FlightWaitTimeoutError);
    const joinerMs = Date.now() - started;
    const timedOut = await leader;
    figure('11.3 local', { joinerWaitTimeoutAfterMs: joinerMs, runTimeoutAfterMs: Date.now() - started });
    expect(timedOut).toBeInstanceOf(FlightExecutionError);
    expect(timedOut).toMatchObject({ errorType: 'TIMEOUT', errorCode: 'E_FLIGHT_RUN_TIMEOUT', retryable: true });
    expect(await sf.execute('eval', key, async () => 'fresh')).toMatchObject({ value: 'fresh', role: 'local' });
  });

  it('local: an abandoned heavy run releases its session lock and bulkhead slot', async () => {
    const sf = make({ mode: 'local', defaults: NO_TIMEOUT, stages: { heavy: { ...HEAVY, maxRunMs: 200 } } });
    const hung = await sf.execute('heavy', 's-1:cv.pdf', never, { sessionId: 's-1' }).catch((e) => e);
    expect(hung).toMatchObject({ errorType: 'TIMEOUT', errorCode: 'E_FLIGHT_RUN_TIMEOUT' });
    expect(await sf.execute('heavy', 's-1:cover.pdf', async () => 'cover', { sessionId: 's-1' })).toMatchObject({ value: 'cover' });
  });

  it('hybrid fallback: the in-process run has the same deadline', async () => {
    const coordinator = downCoordinator(createMemoryCoordinator(), { down: true });
    const sf = make({ coordinator, mode: 'hybrid', defaults: { ...NO_TIMEOUT, maxRunMs: 300 } });
    const key = randomUUID();
    const started = Date.now();
    const hung = await sf.execute('eval', key, never).catch((e) => e);
    figure('11.3 hybrid fallback', { runTimeoutAfterMs: Date.now() - started });
    expect(hung).toMatchObject({ errorType: 'TIMEOUT', errorCode: 'E_FLIGHT_RUN_TIMEOUT' });
    expect(sf.degraded).toBe(true);
    expect(await sf.execute('eval', key, async () => 'fresh')).toMatchObject({ value: 'fresh', role: 'local' });
  });

  for (const mode of ['local', 'distributed'] as const) {
    it(`${mode}: a guard without retry, breaker or bulkhead times the attempt out through the run's deadline and aborts its signal`, async () => {
      const sf = make({
        mode,
        coordinator: createMemoryCoordinator(),
        defaults: { ...NO_TIMEOUT, guard: { timeoutMs: 100, retry: false, circuitBreaker: false, bulkhead: false } },
      });
      let seen: unknown;
      const error = await sf
        .execute(
          'eval',
          randomUUID(),
          ({ signal }) => new Promise((_, reject) => signal.addEventListener('abort', () => reject((seen = signal.reason)))),
        )
        .catch((e) => e);
      expect(error).toMatchObject({ errorType: 'TIMEOUT', errorCode: 'E_FLIGHT_RUN_TIMEOUT', retryable: true });
      expect(seen).toBeInstanceOf(FlightRunTimeoutError);
      // A hung run without any guard layer is still bounded by maxRunMs in local mode.
      if (mode === 'local') {
        const bare = make({
          mode,
          defaults: { maxRunMs: 150, guard: { timeoutMs: 0, retry: false, circuitBreaker: false, bulkhead: false } },
        });
        expect(await bare.execute('eval', randomUUID(), never).catch((e) => e)).toMatchObject({ errorCode: 'E_FLIGHT_RUN_TIMEOUT' });
      }
    });
  }
});
