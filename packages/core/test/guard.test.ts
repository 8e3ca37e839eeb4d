import { describe, expect, it } from 'vitest';
import { FlightConfigurationError, FlightValidationError } from '@flight/core';
import { classifyError, toFailureRecord } from '../src/failure/classify.js';
import { createGuard } from '../src/guard/guard.js';
import { resolveStagePolicy } from '../src/policy/stage-policy.js';

const policy = (guard: object) => resolveStagePolicy('g', { guard });

describe('guard and failure classification', () => {
  it('retries retryable failures only', async () => {
    const guard = createGuard(policy({ retry: { maxAttempts: 3, initialDelayMs: 1, maxDelayMs: 2 }, circuitBreaker: false }));
    let calls = 0;
    await expect(
      guard.execute(async () => {
        calls++;
        if (calls < 3) throw Object.assign(new Error('502'), { status: 502 });
        return 'ok';
      }, new AbortController().signal),
    ).resolves.toBe('ok');
    expect(calls).toBe(3);
    calls = 0;
    await expect(
      guard.execute(async () => {
        calls++;
        throw Object.assign(new Error('400'), { status: 400 });
      }, new AbortController().signal),
    ).rejects.toThrow('400');
    expect(calls).toBe(1);
  });

  it('opens the circuit after consecutive failures and rejects as OVERLOAD', async () => {
    const guard = createGuard(policy({ retry: false, circuitBreaker: { consecutiveFailures: 2, halfOpenAfterMs: 60_000 } }));
    const failing = async () => {
      throw Object.assign(new Error('503'), { status: 500 });
    };
    const signal = new AbortController().signal;
    await expect(guard.execute(failing, signal)).rejects.toThrow('503');
    await expect(guard.execute(failing, signal)).rejects.toThrow('503');
    const open = await guard.execute(async () => 'x', signal).catch((e) => e);
    expect(classifyError(open)).toBe('OVERLOAD');
  });

  it('limits concurrency with the bulkhead', async () => {
    const guard = createGuard(policy({ retry: false, circuitBreaker: false, bulkhead: { limit: 1, queue: 0 } }));
    const signal = new AbortController().signal;
    const slow = guard.execute(() => new Promise((r) => setTimeout(() => r('slow'), 50)), signal);
    const rejected = await guard.execute(async () => 'fast', signal).catch((e) => e);
    expect(classifyError(rejected)).toBe('OVERLOAD');
    expect(await slow).toBe('slow');
  });

  it('classifies statuses, codes and library errors; retryable per stage', () => {
    expect(classifyError(Object.assign(new Error(), { status: 429 }))).toBe('OVERLOAD');
    expect(classifyError(Object.assign(new Error(), { statusCode: 504 }))).toBe('TIMEOUT');
    expect(classifyError(Object.assign(new Error(), { status: 500 }))).toBe('PROVIDER');
    expect(classifyError(Object.assign(new Error(), { status: 422 }))).toBe('VALIDATION');
    expect(classifyError(Object.assign(new Error(), { code: 'ECONNRESET' }))).toBe('PROVIDER');
    expect(classifyError(new FlightValidationError('x'))).toBe('VALIDATION');
    expect(classifyError(new TypeError('oops'))).toBe('UNEXPECTED');
    expect(classifyError(Object.assign(new Error(), { failureType: 'OVERLOAD' }))).toBe('OVERLOAD');
    const strict = resolveStagePolicy('s', {
      retryableFailures: ['TIMEOUT'],
      classify: (e) => ((e as Error).message === 'quota' ? 'OVERLOAD' : undefined),
    });
    expect(toFailureRecord(new Error('quota'), strict)).toMatchObject({ type: 'OVERLOAD', code: 'E_OVERLOAD', retryable: false });
    expect(toFailureRecord(Object.assign(new Error('t'), { code: 'ETIMEDOUT' }), strict)).toMatchObject({
      type: 'TIMEOUT',
      retryable: true,
    });
  });

  it('validates the lease arithmetic of a policy', () => {
    // Below the floor is a configuration error, never raised to it silently.
    expect(() => resolveStagePolicy('s', { heartbeatIntervalMs: 100 })).toThrow(FlightConfigurationError);
    expect(resolveStagePolicy('s', { heartbeatIntervalMs: 500 }).heartbeatIntervalMs).toBe(500);
    expect(() => resolveStagePolicy('s', { takeoverAfterMs: 100 })).toThrow(FlightValidationError);
    expect(() => resolveStagePolicy('s', { leaseTtlMs: 1000 })).toThrow(FlightValidationError);
    expect(() => resolveStagePolicy('s', { resultTtlMs: -1 })).toThrow(FlightValidationError);
    expect(resolveStagePolicy('s', {}, { l1: { enabled: false } }).l1).toEqual({ enabled: false, ttlMs: 30_000 });
  });
});
