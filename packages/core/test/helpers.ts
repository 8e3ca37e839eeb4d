import { afterEach } from 'vitest';
import { createSingleFlight, type SingleFlight, type SingleFlightOptions } from '@flight/core';
import { type FlightCoordinator } from '@flight/core/adapter';

/** A coordinator whose backing store is down while `state.down`: every call fails like a dead Redis connection. */
export function downCoordinator(healthy: FlightCoordinator, state: { down: boolean }): FlightCoordinator {
  return new Proxy(healthy, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function' || prop === 'close' || prop === 'waitForTerminal') return value;
      return (...args: unknown[]) => {
        if (state.down) return Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6379'));
        return value.apply(target, args);
      };
    },
  });
}

/** A supplier that never settles and ignores its signal (a hung upstream call). */
export const never = () => new Promise<never>(() => {});

/** Prints a figure a test measured, for RELIABILITY.md (`[core] {...}`); never asserted on. */
export function figure(name: string, values: Record<string, unknown>): void {
  console.log(`[core] ${JSON.stringify({ name, ...values })}`);
}

/** A factory of single-flights for one test file; every one it made is closed after each test. */
export function singleFlights(): (options: SingleFlightOptions) => SingleFlight {
  const created: SingleFlight[] = [];
  afterEach(async () => {
    await Promise.all(created.splice(0).map((sf) => sf.close()));
  });
  return (options) => {
    const sf = createSingleFlight(options);
    created.push(sf);
    return sf;
  };
}
