/**
 * Issue 11.8: a coordinator outage longer than takeoverAfterMs while an owner runs. Hybrid: the run goes
 * on and its local callers get the value (not shared across nodes); the node reports degraded with a
 * `fallback` event. Distributed: the run is aborted as before (E_FLIGHT_LEASE_LOST).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createMemoryCoordinator, createSingleFlight, type FlightEventMap, type FlightMode, type SingleFlight } from '@flight/core';
import { downCoordinator, figure } from './helpers.js';

const FAST = {
  heartbeatIntervalMs: 500,
  takeoverAfterMs: 800,
  pollIntervalMs: 50,
  guard: { retry: false as const, circuitBreaker: false as const, timeoutMs: 0 },
};
const created: SingleFlight[] = [];
afterEach(async () => {
  await Promise.all(created.splice(0).map((sf) => sf.close()));
});

function outage(mode: FlightMode) {
  const state = { down: false };
  const sf = createSingleFlight({
    coordinator: downCoordinator(createMemoryCoordinator(), state),
    mode,
    defaults: FAST,
    fallbackCooldownMs: 5000,
  });
  created.push(sf);
  const fallbacks: FlightEventMap['fallback'][] = [];
  const lost: FlightEventMap['lease-lost'][] = [];
  sf.on('fallback', (e) => fallbacks.push(e));
  sf.on('lease-lost', (e) => lost.push(e));
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let runs = 0;
  const key = randomUUID();
  const supplier = async () => {
    runs++;
    await gate;
    return { answer: 42 };
  };
  const callers = Promise.allSettled([0, 1, 2].map(() => sf.execute('eval', key, supplier)));
  return { sf, state, fallbacks, lost, release, callers, runs: () => runs };
}

describe('coordinator outage while an owner runs', () => {
  it('hybrid: the running owner keeps its run; its local callers get the value; the node reports degraded', async () => {
    const t = outage('hybrid');
    await sleep(50);
    t.state.down = true;
    const downAt = Date.now();
    await vi.waitFor(() => expect(t.fallbacks.length).toBe(1), { timeout: 5000, interval: 10 });
    const degradedAfterMs = Date.now() - downAt;
    expect(t.sf.degraded).toBe(true);
    t.release();
    const settled = await t.callers;
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    expect(settled.map((s) => (s as PromiseFulfilledResult<{ value: unknown }>).value.value)).toEqual([
      { answer: 42 },
      { answer: 42 },
      { answer: 42 },
    ]);
    expect(t.runs()).toBe(1);
    expect(t.lost).toEqual([]);
    figure('11.8 hybrid', { callers: 3, served: 3, upstreamRuns: t.runs(), degradedAfterMs, fallbackEvents: t.fallbacks.length });
  });

  it('distributed: the run is aborted and its callers get E_FLIGHT_LEASE_LOST', async () => {
    const t = outage('distributed');
    await sleep(50);
    t.state.down = true;
    const settled = await t.callers;
    t.release();
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect((settled[0] as PromiseRejectedResult).reason).toMatchObject({ errorCode: 'E_FLIGHT_LEASE_LOST' });
    expect(t.lost.map((e) => e.reason)).toEqual(['renewal-failed']);
    figure('11.8 distributed', { callers: 3, rejected: 3, code: 'E_FLIGHT_LEASE_LOST' });
  });
});
