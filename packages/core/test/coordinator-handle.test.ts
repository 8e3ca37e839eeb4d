/**
 * `AcquireReply.handle`: what a coordinator derived for one acquire comes back to it, unchanged, with the
 * calls of that run — the owner's writes (`Fence.handle`) and the follower's wait. The Redis coordinator
 * keeps a flight's hashed key there instead of a table of recent flights.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createMemoryCoordinator } from '@flight/core';
import type { FlightCoordinator, AcquireInput } from '@flight/core/adapter';
import { singleFlights } from './helpers.js';

const make = singleFlights();
const POLICY = {
  l1: { enabled: false },
  pollIntervalMs: 1000,
  guard: { retry: false as const, circuitBreaker: false as const, timeoutMs: 0 },
};

/** The memory coordinator, giving each acquire reply a handle of its own and noting the handles it is given back. */
function handing(): { coordinator: FlightCoordinator; issued: { outcome: string; handle: object }[]; given: Record<string, unknown[]> } {
  const inner = createMemoryCoordinator();
  const issued: { outcome: string; handle: object }[] = [];
  const given: Record<string, unknown[]> = { complete: [], fail: [], waitForTerminal: [] };
  const coordinator: FlightCoordinator = {
    ...inner,
    async acquire(input: AcquireInput) {
      const reply = await inner.acquire(input);
      const handle = { n: issued.length };
      issued.push({ outcome: reply.outcome, handle });
      return { ...reply, handle };
    },
    complete(fence, input) {
      given.complete!.push(fence.handle);
      return inner.complete(fence, input);
    },
    fail(fence, input) {
      given.fail!.push(fence.handle);
      return inner.fail(fence, input);
    },
    waitForTerminal(ref, options) {
      given.waitForTerminal!.push(options.handle);
      return inner.waitForTerminal(ref, options);
    },
  };
  return { coordinator, issued, given };
}

describe('the acquire reply handle', () => {
  it("goes back to the coordinator with the owner's complete and with the follower's wait", async () => {
    const { coordinator, issued, given } = handing();
    const sf = make({ mode: 'distributed', coordinator, defaults: POLICY });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const owner = sf.execute('s', 'k', async () => {
      await gate;
      return 42;
    });
    await sleep(10);
    // Another node's call (its own instance on the same coordinator) follows the run.
    const other = make({ mode: 'distributed', coordinator, defaults: POLICY });
    const follower = other.execute('s', 'k', async () => 0);
    await sleep(10);
    release();
    expect((await owner).value).toBe(42);
    expect((await follower).value).toBe(42);
    const ownerReply = issued.find((r) => r.outcome === 'OWNER_NEW')!;
    const followerReply = issued.find((r) => r.outcome === 'FOLLOWER_WAIT')!;
    expect(given.complete).toEqual([ownerReply.handle]);
    expect(given.complete![0]).toBe(ownerReply.handle);
    expect(given.waitForTerminal![0]).toBe(followerReply.handle);
  });

  it("goes back with the owner's failure", async () => {
    const { coordinator, issued, given } = handing();
    const sf = make({ mode: 'distributed', coordinator, defaults: POLICY });
    await expect(
      sf.execute('s', 'bad', async () => {
        throw new Error('upstream down');
      }),
    ).rejects.toThrow('upstream down');
    expect(given.fail).toHaveLength(1);
    expect(given.fail![0]).toBe(issued[0]!.handle);
  });
});
