/**
 * Configuration that would silently do less than asked fails at creation with `FlightConfigurationError`
 * (code `E_FLIGHT_CONFIGURATION`), naming the option and the fix; hybrid mode never answers a
 * misconfigured coordinator by running in-process.
 */
import { describe, expect, it } from 'vitest';
import { createMemoryCoordinator, FlightConfigurationError, FlightValidationError, type SingleFlightOptions } from '@flight/core';
import { type FlightCoordinator } from '@flight/core/adapter';
import { singleFlights } from './helpers.js';

const create = singleFlights();

function refused(options: unknown): FlightConfigurationError {
  try {
    create(options as SingleFlightOptions);
  } catch (error) {
    expect(error).toBeInstanceOf(FlightConfigurationError);
    expect(error).toBeInstanceOf(FlightValidationError);
    expect((error as FlightConfigurationError).code).toBe('E_FLIGHT_CONFIGURATION');
    return error as FlightConfigurationError;
  }
  throw new Error(`accepted ${JSON.stringify(options)}`);
}

describe('createSingleFlight refuses what it would silently ignore', () => {
  it('distributed or hybrid without a coordinator (it would run on an in-memory one)', () => {
    expect(refused({ mode: 'distributed' }).message).toMatch(/needs a coordinator.*createIoredisCoordinator/);
    expect(refused({ mode: 'hybrid' }).context.option).toBe('coordinator');
    // Without a mode, an in-process single-flight is what was asked for.
    expect(create({}).mode).toBe('hybrid');
    expect(create({ mode: 'local' }).mode).toBe('local');
  });

  it('a coordinator that is not one (a Redis client, its options)', () => {
    expect(refused({ coordinator: { host: '127.0.0.1', port: 6379 }, mode: 'distributed' }).message).toMatch(/not a flight coordinator/);
    expect(refused({ coordinator: 'redis://127.0.0.1:6379' }).context.option).toBe('coordinator');
  });

  it('option typos, at every level, with the option meant', () => {
    expect(refused({ stage: { s: {} } }).message).toContain('unknown option "stage" (did you mean "stages"?)');
    expect(refused({ defaults: { resultTTLMs: 1000 } }).message).toContain(
      'defaults: unknown option "resultTTLMs" (did you mean "resultTtlMs"?)',
    );
    expect(refused({ stages: { s: { l1: { ttl: 5 } } } }).message).toContain('stages.s.l1: unknown option "ttl" (did you mean "ttlMs"?)');
    expect(refused({ stages: { s: { guard: { retry: { attempts: 2 } } } } }).context.option).toBe('attempts');
    expect(refused({ defaults: { onCorruptResult: 'ignore' } }).context.option).toBe('onCorruptResult');
    expect(refused({ mode: 'distibuted', coordinator: createMemoryCoordinator() }).context.option).toBe('mode');
  });

  it('a heartbeat below its floor (it was raised to 500 ms without a word)', () => {
    const error = refused({ defaults: { heartbeatIntervalMs: 100 } });
    expect(error.message).toContain('heartbeatIntervalMs must be at least 500 ms, got 100');
    expect(error.context).toMatchObject({ option: 'heartbeatIntervalMs', fix: 500 });
  });
});

describe('hybrid mode falls back in-process on connectivity failures only', () => {
  /** A coordinator whose every call fails with `error`. */
  const failing = (error: Error): FlightCoordinator =>
    new Proxy(createMemoryCoordinator(), {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver) as unknown;
        if (name === 'close' || typeof value !== 'function') return value;
        return () => Promise.reject(error);
      },
    });

  it('a connection refused: the call runs in-process', async () => {
    const sf = create({ coordinator: failing(new Error('connect ECONNREFUSED 127.0.0.1:6379')), mode: 'hybrid' });
    await expect(sf.execute('s', 'k', () => 1)).resolves.toMatchObject({ value: 1, role: 'local' });
  });

  it('a programming error of a miswired client: the call fails with the configuration error, nothing runs', async () => {
    const sf = create({
      coordinator: failing(new TypeError('Function.prototype.apply was called on undefined')),
      mode: 'hybrid',
    });
    let runs = 0;
    const call = sf.execute('s', 'k', () => ++runs);
    await expect(call).rejects.toBeInstanceOf(FlightConfigurationError);
    await expect(call).rejects.toThrow(/check its client and options/);
    expect(runs).toBe(0);
    expect(sf.degraded).toBe(false);
  });
});

describe('per-call options refuse what they would silently ignore', () => {
  it('execute: a misspelt option is refused before anything runs, naming the one meant', async () => {
    const sf = create({ mode: 'local' });
    let runs = 0;
    const supplier = async () => ++runs;
    const typo = await sf.execute('s', 'k', supplier, { atMostOnse: true } as never).catch((error: unknown) => error);
    expect(typo).toBeInstanceOf(FlightConfigurationError);
    expect((typo as FlightConfigurationError).message).toContain('execute: unknown option "atMostOnse" (did you mean "atMostOnce"?)');
    expect((typo as FlightConfigurationError).context).toMatchObject({ option: 'atMostOnse', fix: 'atMostOnce' });
    await expect(sf.execute('s', 'k', supplier, null as never)).rejects.toBeInstanceOf(FlightConfigurationError);
    expect(runs).toBe(0);
    // Known options, and names set to undefined, pass.
    const known = { atMostOnce: true, keepFailures: true, storeInBackground: false, fresh: undefined, typo: undefined };
    expect((await sf.execute('s', 'k', supplier, known as never)).value).toBe(1);
    // An object of a class implementing the options is typed by its class: its own fields are not options.
    class CallOptions {
      readonly keepFailures = true;
      readonly request = { url: '/' };
    }
    expect((await sf.execute('s', 'k2', supplier, new CallOptions())).value).toBe(2);
  });

  it('executeStream: a misspelt option is refused when the stream is opened', () => {
    const sf = create({ mode: 'local' });
    const open = (options: unknown) => () => sf.executeStream('s', 'k', async function* () {}, options as never);
    expect(open({ batchMS: 5 })).toThrow('executeStream: unknown option "batchMS" (did you mean "batchMs"?)');
    expect(open({ atMostOnce: true })).toThrow(FlightConfigurationError);
    expect(open({ batchMs: 5, onRestart: 'error' })).not.toThrow();
  });
});
