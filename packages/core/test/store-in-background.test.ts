/**
 * `ExecuteOptions.storeInBackground`: the owner's callers get the value when the supplier returns; the store
 * for later callers (and other nodes' followers) goes on after, and `close()` waits for it. The coordinator's
 * `complete` is held at a gate here so that "before the store" is an observed fact, not a timing guess.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createMemoryCoordinator } from '@flight/core';
import { type FlightCoordinator } from '@flight/core/adapter';
import { singleFlights } from './helpers.js';

const create = singleFlights();
const DEFAULTS = { l1: { enabled: false }, guard: { retry: false as const, circuitBreaker: false as const } };

/** A memory coordinator whose `complete` waits until `open()` (or fails with `fail(error)`). */
function gatedStores() {
  const coordinator = createMemoryCoordinator();
  let open!: () => void;
  let fail!: (error: Error) => void;
  const gate = new Promise<void>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  gate.catch(() => undefined);
  let stores = 0;
  const complete = coordinator.complete.bind(coordinator);
  coordinator.complete = async (...args: Parameters<FlightCoordinator['complete']>) => {
    await gate;
    stores++;
    return complete(...args);
  };
  return { coordinator, open, fail, stores: () => stores };
}

/** Whether `promise` settles within `ms`. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return Promise.race([
    promise.then(
      () => true,
      () => true,
    ),
    sleep(ms).then(() => false),
  ]);
}

describe('storeInBackground', () => {
  it("answers the owner's callers before the store; other nodes get the value once it is stored; close waits for it", async () => {
    const gated = gatedStores();
    const [a, b] = ['a', 'b'].map((nodeId) => create({ mode: 'distributed', coordinator: gated.coordinator, nodeId, defaults: DEFAULTS }));
    const key = randomUUID();
    let runs = 0;
    const supplier = async () => {
      runs++;
      return { answer: 42 };
    };
    const owner = a!.execute('s', key, supplier, { storeInBackground: true });
    const joiner = a!.execute('s', key, supplier, { storeInBackground: true });
    expect(await settlesWithin(Promise.all([owner, joiner]), 500)).toBe(true);
    expect(await owner).toMatchObject({ value: { answer: 42 }, role: 'owner' });
    expect((await joiner).value).toEqual({ answer: 42 });
    expect(gated.stores()).toBe(0);

    // Another node's caller follows the run until its value is stored.
    const follower = b!.execute('s', key, supplier);
    expect(await settlesWithin(follower, 150)).toBe(false);
    const closed = a!.close();
    expect(await settlesWithin(closed, 100)).toBe(false);
    gated.open();
    await closed;
    expect(await follower).toMatchObject({ value: { answer: 42 }, role: 'follower' });
    expect(gated.stores()).toBe(1);
    expect(runs).toBe(1);
  });

  it('writes the store only after the owner has resumed, so not even sending it is on its path', async () => {
    const coordinator = createMemoryCoordinator();
    const events: string[] = [];
    const complete = coordinator.complete.bind(coordinator);
    coordinator.complete = (...args: Parameters<FlightCoordinator['complete']>) => {
      events.push('store sent');
      return complete(...args);
    };
    const sf = create({ mode: 'distributed', coordinator, defaults: DEFAULTS });
    const result = await sf.execute('s', randomUUID(), async () => 'v', { storeInBackground: true });
    events.push('owner resumed');
    expect(result.value).toBe('v');
    await sf.close();
    expect(events).toEqual(['owner resumed', 'store sent']);
  });

  it('without it, nobody gets the value before it is stored', async () => {
    const gated = gatedStores();
    const sf = create({ mode: 'distributed', coordinator: gated.coordinator, defaults: DEFAULTS });
    const call = sf.execute('s', randomUUID(), async () => 'v');
    expect(await settlesWithin(call, 200)).toBe(false);
    gated.open();
    expect((await call).value).toBe('v');
  });

  it("a store that fails leaves the owner's callers their value, and later callers run again", async () => {
    const gated = gatedStores();
    const logged: string[] = [];
    const logger = { debug() {}, info() {}, warn: (_: unknown, message: string) => void logged.push(message), error() {} };
    const defaults = { ...DEFAULTS, heartbeatIntervalMs: 500, takeoverAfterMs: 800, pollIntervalMs: 50 };
    const sf = create({ mode: 'distributed', coordinator: gated.coordinator, defaults, logger });
    const key = randomUUID();
    let runs = 0;
    const supplier = async () => ++runs;
    gated.fail(new Error('connect ECONNREFUSED 127.0.0.1:6379'));
    expect(await sf.execute('s', key, supplier, { storeInBackground: true })).toMatchObject({ value: 1, role: 'owner' });
    await sleep(20);
    expect(logged.some((m) => m.includes('could not store the result'))).toBe(true);
    // Nothing was stored: the flight lapses like an owner's that never completed, and is taken over.
    expect(await sf.execute('s', key, supplier, { storeInBackground: true })).toMatchObject({ value: 2, role: 'owner' });
  });
});
