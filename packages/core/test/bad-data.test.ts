import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createMemoryCoordinator,
  createSingleFlight,
  FlightCorruptResultError,
  FlightExecutionError,
  type SingleFlight,
  type SingleFlightOptions,
} from '@flight/core';
import { type FlightCoordinator, systemClock } from '@flight/core/adapter';

const FAST = {
  heartbeatIntervalMs: 500,
  takeoverAfterMs: 800,
  pollIntervalMs: 50,
  guard: { retry: false as const, circuitBreaker: false as const, timeoutMs: 0 },
};
const created: SingleFlight[] = [];
const make = (options: SingleFlightOptions) => {
  const sf = createSingleFlight({ mode: 'distributed', ...options, defaults: { ...FAST, ...options.defaults } });
  created.push(sf);
  return sf;
};
afterEach(async () => {
  await Promise.all(created.splice(0).map((sf) => sf.close()));
});

/** Stores a success whose payload is damaged, through the real coordinator API. */
async function storeDamaged(coordinator: FlightCoordinator, key: string, payload: string) {
  const lease = { takeoverAfterMs: 800, leaseTtlMs: 1600, maxRunMs: 60_000 };
  const { meta } = await coordinator.acquire({ stage: 'eval', key, ...lease, ownerId: 'writer', ownerToken: 't' });
  const fence = { stage: 'eval', key, ownerId: 'writer', ownerToken: 't', epoch: meta.epoch };
  await coordinator.markRunning(fence, lease);
  await coordinator.complete(fence, { result: payload, resultTtlMs: 60_000 });
}

describe('bad data and bad input', () => {
  it('never returns a corrupt or truncated stored result: re-runs by default, or throws per policy', async () => {
    const coordinator = createMemoryCoordinator();
    const good = make({ coordinator, nodeId: 'w' });
    const key = randomUUID();
    await good.execute('eval', key, async () => ({ score: 9 }));
    const stored = (await coordinator.readResult({ stage: 'eval', key })) as string;

    const truncatedKey = randomUUID();
    await storeDamaged(coordinator, truncatedKey, stored.slice(0, -3));
    const rerun = make({ coordinator, nodeId: 'r' });
    const corrupt: string[] = [];
    rerun.on('corrupt', (e) => corrupt.push(e.action));
    expect(await rerun.execute('eval', truncatedKey, async () => ({ score: 7 }))).toMatchObject({ value: { score: 7 }, role: 'local' });
    expect(corrupt).toEqual(['rerun']);

    const strict = make({ coordinator, nodeId: 's', defaults: { onCorruptResult: 'error' } });
    const flippedKey = randomUUID();
    await storeDamaged(
      coordinator,
      flippedKey,
      stored.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')),
    );
    await expect(strict.execute('eval', flippedKey, async () => 'unused')).rejects.toBeInstanceOf(FlightCorruptResultError);
  });

  it('gives typed, non-retryable errors for results over the cap or not serializable, and stores the failure', async () => {
    const coordinator = createMemoryCoordinator();
    const sf = make({ coordinator, defaults: { maxResultBytes: 1000 } });
    const big = randomUUID();
    await expect(sf.execute('eval', big, async () => 'x'.repeat(5000))).rejects.toMatchObject({
      errorType: 'VALIDATION',
      errorCode: 'E_FLIGHT_RESULT_TOO_LARGE',
      retryable: false,
    });
    expect((await coordinator.readMeta({ stage: 'eval', key: big }))?.status).toBe('FAILED');
    await expect(sf.execute('eval', randomUUID(), async () => ({ n: 1n }))).rejects.toMatchObject({ errorType: 'VALIDATION' });
  });

  it('handles suppliers that throw non-Errors or never settle: typed errors, no leaked timers, no stuck key', async () => {
    const coordinator = createMemoryCoordinator();
    const sf = make({ coordinator, defaults: { maxRunMs: 1200 } });
    for (const thrown of ['a string', undefined, 42, { weird: true }]) {
      const error = await sf.execute('eval', randomUUID(), async () => Promise.reject(thrown)).catch((e) => e);
      expect(error).toBeInstanceOf(FlightExecutionError);
      expect(error.errorType).toBe('UNEXPECTED');
    }
    const key = randomUUID();
    const hung = await sf.execute('eval', key, () => new Promise(() => {})).catch((e) => e);
    expect(hung).toMatchObject({ errorType: 'TIMEOUT', errorCode: 'E_FLIGHT_LEASE_LOST', retryable: true });
    expect((sf as unknown as { runtime: { heartbeats: { size: number } } }).runtime.heartbeats.size).toBe(0);
    // The key is not stuck: it was expired, so the next caller owns a fresh run.
    expect(await sf.execute('eval', key, async () => 'works')).toMatchObject({ value: 'works', role: 'owner' });
  });

  it('does not take over a live owner because of a node whose clock is minutes off', async () => {
    const coordinator = createMemoryCoordinator(); // lease arithmetic on the coordinator's clock
    const honest = make({ coordinator, nodeId: 'honest' });
    const skewed = make({ coordinator, nodeId: 'skewed', clock: { ...systemClock, now: () => Date.now() + 10 * 60_000 } });
    const key = randomUUID();
    let runs = 0;
    const slow = async () => {
      runs++;
      await sleep(1500); // spans several heartbeats and the takeover window
      return 'honest value';
    };
    const first = honest.execute('eval', key, slow);
    await sleep(50);
    const second = await skewed.execute('eval', key, slow);
    expect(second).toMatchObject({ value: 'honest value', role: 'follower' });
    expect((await first).role).toBe('owner');
    expect(runs).toBe(1);
  });
});
