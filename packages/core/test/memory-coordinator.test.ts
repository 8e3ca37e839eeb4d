/**
 * The memory coordinator hands out copies: a caller that mutates a reply, or the input it passed, never
 * changes the stored record (what a Redis coordinator gives for free). It copies one level (records and
 * replies hold only primitives below `meta`) instead of `structuredClone`.
 */
import { describe, expect, it } from 'vitest';
import { createMemoryCoordinator } from '@flight/core';
import { type AcquireInput } from '@flight/core/adapter';

const LEASE = { takeoverAfterMs: 3000, leaseTtlMs: 6000, maxRunMs: 60_000 };

describe('memory coordinator isolation', () => {
  it('replies, read metadata and inputs never alias the stored record', async () => {
    const coordinator = createMemoryCoordinator();
    const ref = { stage: 'eval', key: 'k1' };
    const input: AcquireInput = { ...ref, ...LEASE, ownerId: 'a', ownerToken: 'tok-a', startRunning: true };
    const acquired = await coordinator.acquire(input);
    expect(acquired.outcome).toBe('OWNER_NEW');
    const epoch = acquired.meta.epoch;
    acquired.meta.status = 'SUCCEEDED';
    acquired.meta.ownerToken = 'forged';
    input.ownerToken = 'changed';
    const read = await coordinator.readMeta(ref);
    expect(read).toMatchObject({ status: 'RUNNING', ownerToken: 'tok-a', epoch });
    read!.status = 'FAILED';
    const fence = { ...ref, ownerId: 'a', ownerToken: 'tok-a', epoch };
    const beat = await coordinator.heartbeat(fence, LEASE);
    expect(beat.ok).toBe(true);
    if (beat.ok) beat.meta.epoch = 0;
    const done = await coordinator.complete(fence, { result: 'v', resultTtlMs: 60_000 });
    expect(done).toMatchObject({ ok: true, meta: { status: 'SUCCEEDED', epoch } });
    if (done.ok) done.meta.status = 'CANCELLED';
    const replay = await coordinator.acquire({ ...ref, ...LEASE, ownerId: 'b', ownerToken: 'tok-b' });
    expect(replay).toMatchObject({ outcome: 'REPLAY_SUCCESS', result: 'v', meta: { status: 'SUCCEEDED', epoch, ownerToken: 'tok-a' } });
  });
});
