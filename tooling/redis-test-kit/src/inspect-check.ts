/**
 * The read-only inspector of a Redis coordinator (`inspect`, `listFlights`) on a standalone server or a
 * cluster: flights in every state, found by stage across every master, never showing an owner's token.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { FlightValidationError } from '@flight/core';
import { flightKeys, type RedisCoordinator } from '@flight/redis-scripts';

const LEASE = { takeoverAfterMs: 3000, leaseTtlMs: 6000, maxRunMs: 20_000 };

/** Starts a flight owned by node `node-a` through `c` (RUNNING when `running`, else PENDING); resolves its fence. */
export async function startFlight(
  c: RedisCoordinator,
  ref: { stage: string; key: string },
  token: string,
  running: boolean,
  lease = LEASE,
) {
  const reply = await c.acquire({ ...ref, ...lease, ownerId: 'node-a', ownerToken: token });
  const fence = { ...ref, ownerId: 'node-a', ownerToken: token, epoch: reply.meta.epoch };
  if (running) await c.markRunning(fence, lease);
  return fence;
}

/** Runs the inspector's checks on coordinators made by `make` (one prefix of their own, cleaned up after). */
export async function checkInspector(make: (prefix: string) => RedisCoordinator): Promise<void> {
  const prefix = `flight-inspect-${randomUUID().slice(0, 8)}`;
  const c = make(prefix);
  const token = `secret-${randomUUID()}`;
  try {
    const live = await startFlight(c, { stage: 'report', key: 'running' }, token, true);
    await startFlight(c, { stage: 'report', key: 'pending' }, token, false);
    const done = await startFlight(c, { stage: 'report', key: 'done' }, token, true);
    await c.complete(done, { result: 'result-123', resultTtlMs: 60_000 });
    await startFlight(c, { stage: 'chat', key: 'running' }, token, true);
    for (let i = 0; i < 30; i++) await startFlight(c, { stage: 'bulk', key: `k${i}` }, token, true);

    const running = await c.inspect('report', 'running');
    expect(running).toMatchObject({
      stage: 'report',
      key: 'running',
      digest: flightKeys(prefix, { stage: 'report', key: 'running' }).tag,
      redisKey: flightKeys(prefix, { stage: 'report', key: 'running' }).meta,
      status: 'RUNNING',
      epoch: live.epoch,
      owner: 'node-a',
      followers: 0,
      forgotten: false,
    });
    expect(running!.heartbeatAgeMs).toBeGreaterThanOrEqual(0);
    expect(running!.expiresInMs).toBeGreaterThan(0);
    expect(running!.expiresInMs).toBeLessThanOrEqual(LEASE.leaseTtlMs + 1000);
    expect(running!.redisKey.startsWith(`${prefix}:report:{`)).toBe(true);

    const stored = await c.inspect('report', 'done');
    expect(stored).toMatchObject({ status: 'SUCCEEDED', resultBytes: 'result-123'.length });
    expect(stored!.expiresInMs).toBeGreaterThan(50_000);
    expect(stored).not.toHaveProperty('heartbeatAgeMs');
    expect(await c.inspect('report', 'never-ran')).toBeNull();

    const inProgress = await c.listFlights({ stage: 'report' });
    expect(inProgress.map((f) => f.status).sort()).toEqual(['PENDING', 'RUNNING']);
    expect(inProgress.every((f) => f.key === undefined && f.stage === 'report')).toBe(true);
    expect((await c.listFlights({ stage: 'report', all: true })).map((f) => f.status).sort()).toEqual(['PENDING', 'RUNNING', 'SUCCEEDED']);
    expect(await c.listFlights({ stage: 'chat' })).toHaveLength(1);
    // On a cluster the 30 keys lie on every master: all are found, and a limit stops the scan early.
    expect(await c.listFlights({ stage: 'bulk' })).toHaveLength(30);
    expect(await c.listFlights({ stage: 'bulk', limit: 10 })).toHaveLength(10);
    expect(await c.listFlights({ stage: 'nothing-here' })).toEqual([]);

    const everything = JSON.stringify([running, stored, ...(await c.listFlights({ stage: 'bulk', all: true }))]);
    expect(everything).not.toContain(token);

    await expect(c.listFlights({ stage: 'not a stage' })).rejects.toBeInstanceOf(FlightValidationError);
    await expect(c.listFlights({ stage: 'report', limit: 0 })).rejects.toBeInstanceOf(FlightValidationError);
    await expect(c.inspect('{bad}', 'k')).rejects.toBeInstanceOf(FlightValidationError);
  } finally {
    // Every key it wrote has a TTL (at most the result's 60 s).
    await c.close();
  }
}
