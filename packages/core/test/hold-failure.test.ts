/**
 * `ExecuteOptions.holdFailure`: a failure kept, not retryable, for as long as the hook says — later callers
 * of the key get it at once instead of waiting behind a new run (an HTTP response that may never be shared).
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createMemoryCoordinator, FlightExecutionError, FlightValidationError } from '@flight/core';
import { singleFlights } from './helpers.js';

const create = singleFlights();
const DEFAULTS = { l1: { enabled: false }, failureTtlMs: 60_000, guard: { retry: false as const, circuitBreaker: false as const } };

class NeverShared extends Error {
  readonly code = 'E_NEVER_SHARED';
}

describe('holdFailure', () => {
  it('keeps the failure it holds for that long: later callers get it at once, then the next one runs again', async () => {
    const coordinator = createMemoryCoordinator();
    const [a, b] = ['a', 'b'].map((nodeId) => create({ mode: 'distributed', coordinator, nodeId, defaults: DEFAULTS }));
    const key = randomUUID();
    let runs = 0;
    const supplier = async () => {
      runs++;
      await sleep(100);
      throw new NeverShared('private');
    };
    const hold = { keepFailures: false, holdFailure: (error: unknown) => (error instanceof NeverShared ? 300 : undefined) };
    await expect(a!.execute('h', key, supplier, hold)).rejects.toBeInstanceOf(FlightExecutionError);
    const held = await b!.execute('h', key, supplier, hold).catch((error: unknown) => error);
    expect(held).toMatchObject({ errorCode: 'E_NEVER_SHARED', replayed: true });
    expect(runs).toBe(1);
    await sleep(350);
    await expect(b!.execute('h', key, supplier, hold)).rejects.toMatchObject({ replayed: false });
    expect(runs).toBe(2);
  });

  it('holds nothing when the hook says undefined or throws: keepFailures: false applies', async () => {
    const sf = create({ mode: 'distributed', coordinator: createMemoryCoordinator(), defaults: DEFAULTS });
    const key = randomUUID();
    let runs = 0;
    const supplier = async () => {
      runs++;
      throw new NeverShared('private');
    };
    for (const holdFailure of [
      () => undefined,
      () => {
        throw new Error('broken hook');
      },
    ]) {
      await expect(sf.execute('h', key, supplier, { keepFailures: false, holdFailure })).rejects.toMatchObject({ replayed: false });
    }
    expect(runs).toBe(2);
    await expect(sf.execute('h', key, supplier, { holdFailure: 5 as never })).rejects.toBeInstanceOf(FlightValidationError);
  });
});
