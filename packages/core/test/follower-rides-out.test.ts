/**
 * A follower whose coordinator stops answering while the run it follows goes on elsewhere (a failover, a
 * restart, a dropped connection): it asks again within its wait instead of failing at the first refused
 * command. A first acquire still fails at once, and a wait that runs out ends with the coordination error.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createMemoryCoordinator, FlightCoordinationError, type SingleFlightOptions, type StagePolicyInput } from '@flight/core';

type FlightLogger = NonNullable<SingleFlightOptions['logger']>;
import { downCoordinator, singleFlights } from './helpers.js';

const FAST: StagePolicyInput = {
  heartbeatIntervalMs: 500,
  takeoverAfterMs: 60_000,
  leaseTtlMs: 120_000,
  pollIntervalMs: 30,
  waitTimeoutMs: 60_000,
  l1: { enabled: false },
  guard: { retry: false, circuitBreaker: false, timeoutMs: 0 },
};
const make = singleFlights();

/** A logger that resolves `refused` at the first "asking again" warning. */
function watchingLogger() {
  let seen!: () => void;
  const refused = new Promise<void>((resolve) => (seen = resolve));
  const logger: FlightLogger = {
    debug() {},
    info() {},
    error() {},
    warn(_fields, message) {
      if (message?.includes('asking again within its wait')) seen();
    },
  };
  return { logger, refused };
}

describe('a follower whose coordinator stops answering', () => {
  it('asks again within its wait and gets the run it followed once its coordinator answers again', async () => {
    const shared = createMemoryCoordinator();
    const state = { down: false };
    const { logger, refused } = watchingLogger();
    const a = make({ coordinator: shared, mode: 'distributed', nodeId: 'a', defaults: FAST });
    const b = make({ coordinator: downCoordinator(shared, state), mode: 'distributed', nodeId: 'b', defaults: FAST, logger });
    const key = randomUUID();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let runs = 0;
    const supplier = async () => {
      runs++;
      await gate;
      return 'v';
    };
    const owner = a.execute('s', key, supplier);
    b.on('follower', () => (state.down = true)); // B joins the run; then its coordinator stops answering
    const follower = b.execute('s', key, supplier);
    await refused; // B's acquire was refused while it follows: it keeps waiting
    release();
    expect(await owner).toMatchObject({ value: 'v', role: 'owner' });
    state.down = false;
    expect(await follower).toMatchObject({ value: 'v', role: 'follower' });
    expect(runs).toBe(1);
  });

  it('fails a first acquire at once, and a follower whose wait runs out with the coordination error', async () => {
    const shared = createMemoryCoordinator();
    const state = { down: false };
    const { logger, refused } = watchingLogger();
    const a = make({ coordinator: shared, mode: 'distributed', nodeId: 'a', defaults: FAST });
    const b = make({
      coordinator: downCoordinator(shared, state),
      mode: 'distributed',
      nodeId: 'b',
      defaults: { ...FAST, waitTimeoutMs: 300 },
      logger,
    });
    const key = randomUUID();
    const owner = a.execute('s', key, () => new Promise<string>(() => {}));
    b.on('follower', () => (state.down = true));
    await expect(b.execute('s', key, async () => 'never')).rejects.toBeInstanceOf(FlightCoordinationError);
    await refused;
    await expect(b.execute('s', randomUUID(), async () => 'first')).rejects.toBeInstanceOf(FlightCoordinationError);
    void owner.catch(() => undefined);
  });

  it('hybrid: a follower that may fall back does so instead of waiting for the coordinator', async () => {
    const shared = createMemoryCoordinator();
    const state = { down: false };
    const a = make({ coordinator: shared, mode: 'distributed', nodeId: 'a', defaults: FAST });
    const b = make({ coordinator: downCoordinator(shared, state), mode: 'hybrid', nodeId: 'b', defaults: FAST });
    const key = randomUUID();
    const owner = a.execute('s', key, () => new Promise<string>(() => {}));
    b.on('follower', () => (state.down = true));
    expect(await b.execute('s', key, async () => 'local')).toMatchObject({ value: 'local', role: 'local' });
    void owner.catch(() => undefined);
  });
});
