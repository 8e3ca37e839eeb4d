/**
 * Issue 11.8 on a real Redis: the redis-server dies while an owner runs, for longer than takeoverAfterMs.
 * Hybrid: the owner's run goes on, its callers on that node get its value, and the node reports degraded.
 * Distributed: the run is aborted and its callers get a typed E_FLIGHT_LEASE_LOST, as before.
 * Each mode on a redis-server of the test's own, killed with SIGKILL mid-run.
 */
import { FlightExecutionError, FlightLeaseLostError } from '@flight/core';
import { startRedisServer, type RedisServer } from '@flight/test-servers';
import { afterEach, describe, expect, it } from 'vitest';
import { expectedValue, recordFigure, sleep, startNode, type TestNode } from '../src/index.js';

let server: RedisServer | undefined;
let node: TestNode | undefined;
afterEach(async () => {
  await node?.close();
  await server?.stop();
  node = undefined;
  server = undefined;
});

async function outageDuringRun(mode: 'hybrid' | 'distributed') {
  server = await startRedisServer();
  node = startNode({ id: `owner-${mode}`, url: server.url, mode, commandTimeoutMs: 300, fallbackCooldownMs: 5000 });
  const key = `outage-${mode}`;
  // Three callers of one key on this node; the run takes 2.5 s, well past takeoverAfterMs (1.2 s).
  const callers = Promise.allSettled([0, 1, 2].map(() => node!.call(key, 2500)));
  await sleep(300);
  const killedAt = Date.now();
  await server.stop();
  const settled = await callers;
  return {
    settled,
    key,
    afterMs: Date.now() - killedAt,
    runs: node.totalRuns(),
    events: { ...node.events },
    degraded: node.flight.degraded,
  };
}

describe('11.8: Redis dies while an owner runs', () => {
  it('hybrid: the owner keeps its run and its local callers get the value; the node reports degraded', async () => {
    const r = await outageDuringRun('hybrid');
    expect(r.settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    for (const s of r.settled) expect((s as PromiseFulfilledResult<{ value: unknown }>).value.value).toEqual(expectedValue(r.key));
    expect(r.runs).toBe(1);
    expect(r.events.leaseLost).toBe(0);
    expect(r.events.fallbacks).toBeGreaterThanOrEqual(1);
    expect(r.degraded).toBe(true);
    recordFigure('11.8 hybrid owner, redis killed mid-run', {
      callers: 3,
      served: 3,
      upstreamRuns: r.runs,
      fallbacks: r.events.fallbacks,
      settledAfterKillMs: r.afterMs,
    });
  });

  it('distributed: the run is aborted and its callers get E_FLIGHT_LEASE_LOST', async () => {
    const r = await outageDuringRun('distributed');
    expect(r.settled.map((s) => s.status)).toEqual(['rejected', 'rejected', 'rejected']);
    for (const s of r.settled) {
      const reason = (s as PromiseRejectedResult).reason as unknown;
      expect(reason).toBeInstanceOf(FlightExecutionError);
      expect(reason).toMatchObject({ errorType: 'TIMEOUT', errorCode: FlightLeaseLostError.code });
    }
    expect(r.events.leaseLost).toBe(1);
    recordFigure('11.8 distributed owner, redis killed mid-run', {
      callers: 3,
      rejected: 3,
      code: FlightLeaseLostError.code,
      settledAfterKillMs: r.afterMs,
    });
  });
});
