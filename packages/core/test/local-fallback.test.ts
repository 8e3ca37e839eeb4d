/**
 * `ExecuteOptions.localFallback: false` in hybrid mode: a call that must not run unless coordinated
 * cluster-wide gets the coordination failure instead of an in-process run — also while the node is
 * in its fallback cooldown — and runs normally once coordination works.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryCoordinator, createSingleFlight, FlightCoordinationError, type SingleFlight } from '@flight/core';
import { type FlightCoordinator } from '@flight/core/adapter';

const instances: SingleFlight[] = [];
afterEach(async () => {
  await Promise.all(instances.splice(0).map((sf) => sf.close()));
});

/** The memory coordinator, refusing every call the way an unreachable Redis does while `state.down`. */
function switchable(state: { down: boolean }): FlightCoordinator {
  const healthy = createMemoryCoordinator();
  return new Proxy(healthy, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function' || prop === 'close' || prop === 'waitForTerminal') return value;
      return (...args: unknown[]) =>
        state.down ? Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:1')) : value.apply(target, args);
    },
  });
}

describe('localFallback: false (hybrid mode)', () => {
  it('throws the coordination failure and never runs the supplier; the default still falls back', async () => {
    const state = { down: true };
    const sf = createSingleFlight({
      coordinator: switchable(state),
      mode: 'hybrid',
      fallbackCooldownMs: 60_000,
      defaults: { guard: { retry: false, circuitBreaker: false, timeoutMs: 0 } },
    });
    instances.push(sf);
    let runs = 0;
    const supplier = async () => ++runs;

    await expect(sf.execute('orders', randomUUID(), supplier, { localFallback: false })).rejects.toBeInstanceOf(FlightCoordinationError);
    expect(runs).toBe(0);
    // The default call falls back in-process and puts the node in its cooldown…
    expect((await sf.execute('orders', randomUUID(), supplier)).role).toBe('local');
    expect(runs).toBe(1);
    expect(sf.degraded).toBe(true);
    // …during which a no-fallback call is refused without even trying the coordinator.
    await expect(sf.execute('orders', randomUUID(), supplier, { localFallback: false })).rejects.toThrow(/cooling down/);
    expect(runs).toBe(1);
  });

  it('runs coordinated when the coordinator answers', async () => {
    const sf = createSingleFlight({ coordinator: switchable({ down: false }), mode: 'hybrid' });
    instances.push(sf);
    const result = await sf.execute('orders', randomUUID(), async () => 'ok', { localFallback: false });
    expect(result).toMatchObject({ value: 'ok', role: 'owner' });
  });
});
