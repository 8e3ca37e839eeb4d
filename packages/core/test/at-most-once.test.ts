/**
 * `ExecuteOptions.atMostOnce`: a run that must never be re-run automatically (a handler under an
 * Idempotency-Key). Its TIMEOUT and lost-lease failures are recorded non-retryable, so the next caller of
 * the key gets the failure replayed instead of running the supplier again; the guard does not retry it.
 * Without the flag the same failures stay retryable (the next caller runs again), as before.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryCoordinator, createSingleFlight, type SingleFlight, type SingleFlightOptions } from '@flight/core';
import { figure } from './helpers.js';

const created: SingleFlight[] = [];
const make = (options: SingleFlightOptions) => {
  const sf = createSingleFlight({ mode: 'distributed', ...options });
  created.push(sf);
  return sf;
};
afterEach(async () => {
  await Promise.all(created.splice(0).map((sf) => sf.close()));
});

/** A handler slower than the guard timeout (40 ms), counting its runs. */
function slowHandler() {
  let runs = 0;
  return {
    runs: () => runs,
    supplier: async () => {
      runs++;
      await sleep(120);
      return 'done';
    },
  };
}

const SLOW_STAGE = { guard: { retry: false as const, circuitBreaker: false as const, timeoutMs: 40 }, failureTtlMs: 60_000 };

describe('atMostOnce', () => {
  it('a run past the guard timeout is a non-retryable TIMEOUT: the same key is replayed, not run again', async () => {
    const sf = make({ coordinator: createMemoryCoordinator(), defaults: SLOW_STAGE });
    const key = randomUUID();
    const handler = slowHandler();
    const started = Date.now();
    await expect(sf.execute('idem', key, handler.supplier, { atMostOnce: true })).rejects.toMatchObject({
      errorType: 'TIMEOUT',
      retryable: false,
      replayed: false,
    });
    const firstMs = Date.now() - started;
    await expect(sf.execute('idem', key, handler.supplier, { atMostOnce: true })).rejects.toMatchObject({
      errorType: 'TIMEOUT',
      retryable: false,
      replayed: true,
    });
    await sleep(150);
    expect(handler.runs()).toBe(1);
    figure('atMostOnce guard timeout', { firstMs, runs: handler.runs(), secondReplayed: true });
  });

  it('without the flag the same TIMEOUT stays retryable and the next caller runs the handler again', async () => {
    const sf = make({ coordinator: createMemoryCoordinator(), defaults: SLOW_STAGE });
    const key = randomUUID();
    const handler = slowHandler();
    await expect(sf.execute('idem', key, handler.supplier)).rejects.toMatchObject({ errorType: 'TIMEOUT', retryable: true });
    await expect(sf.execute('idem', key, handler.supplier)).rejects.toMatchObject({ errorType: 'TIMEOUT', replayed: false });
    expect(handler.runs()).toBe(2);
  });

  it('a run whose lease is lost (stalled) is recorded non-retryable', async () => {
    const coordinator = createMemoryCoordinator();
    const sf = make({
      coordinator,
      defaults: {
        heartbeatIntervalMs: 500,
        takeoverAfterMs: 2000,
        stallTimeoutMs: 300,
        guard: { retry: false, circuitBreaker: false, timeoutMs: 0 },
        failureTtlMs: 60_000,
      },
    });
    const key = randomUUID();
    let runs = 0;
    // Reports progress once, then hangs: the heartbeat's stall rule drops the lease at its first tick.
    const stalls = async (ctx: { progress(): void; signal: AbortSignal }) => {
      runs++;
      ctx.progress();
      await new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)));
    };
    const started = Date.now();
    await expect(sf.execute('idem', key, stalls, { atMostOnce: true })).rejects.toMatchObject({ errorType: 'TIMEOUT', retryable: false });
    figure('atMostOnce stalled lease', { lostAfterMs: Date.now() - started });
    expect(await coordinator.readMeta({ stage: 'idem', key })).toMatchObject({ status: 'FAILED', retryable: false });
    await expect(sf.execute('idem', key, stalls, { atMostOnce: true })).rejects.toMatchObject({ replayed: true });
    expect(runs).toBe(1);
    figure('atMostOnce stalled lease runs', { runs });
  });

  it('the guard does not retry an atMostOnce run, but still retries other calls of the stage', async () => {
    const sf = make({
      coordinator: createMemoryCoordinator(),
      defaults: { guard: { retry: { maxAttempts: 3, initialDelayMs: 1, maxDelayMs: 1 }, circuitBreaker: false, timeoutMs: 0 } },
    });
    let runs = 0;
    const failing = async () => {
      runs++;
      throw Object.assign(new Error('upstream 500'), { status: 500 });
    };
    await expect(sf.execute('idem', randomUUID(), failing, { atMostOnce: true })).rejects.toMatchObject({
      errorType: 'PROVIDER',
      retryable: false,
    });
    expect(runs).toBe(1);
    runs = 0;
    await expect(sf.execute('idem', randomUUID(), failing)).rejects.toMatchObject({ errorType: 'PROVIDER', retryable: true });
    expect(runs).toBe(3);
  });
});
