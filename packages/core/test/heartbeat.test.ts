import { describe, expect, it } from 'vitest';
import { type LeaseLossReason } from '@flight/core';
import { silentLogger } from '@flight/core/adapter';
import { HeartbeatManager, type HeartbeatSpec, type RenewResult } from '../src/heartbeat/heartbeat-manager.js';
import { createManualClock } from '@flight/core/testing';

function setup(overrides: Partial<HeartbeatSpec> = {}, renew: () => Promise<RenewResult> = async () => 'ok') {
  const clock = createManualClock();
  const manager = new HeartbeatManager(clock, silentLogger);
  const lost: LeaseLossReason[] = [];
  let renewals = 0;
  const task = manager.start({
    requestKey: 'k',
    ownerToken: 't',
    intervalMs: 1000,
    takeoverAfterMs: 3000,
    maxRunMs: 60_000,
    stallTimeoutMs: 5000,
    renew: () => {
      renewals++;
      return renew();
    },
    onLost: (reason) => lost.push(reason),
    ...overrides,
  });
  return { clock, manager, task, lost, renewals: () => renewals };
}

describe('HeartbeatManager', () => {
  it('renews every interval until stopped', async () => {
    const { clock, manager, task, renewals, lost } = setup();
    await clock.advance(3500);
    expect(renewals()).toBe(3);
    manager.stop(task.taskKey);
    await clock.advance(5000);
    expect(renewals()).toBe(3);
    expect(lost).toEqual([]);
    expect(clock.pending).toBe(0);
    expect(task.taskKey).toBe('k|t');
  });

  it('stops at the max run time even while the process is alive (a timer alone would renew a stuck owner forever)', async () => {
    const { clock, lost, renewals, manager } = setup({ maxRunMs: 4000 });
    await clock.advance(10_000);
    expect(lost).toEqual(['max-run-time']);
    expect(renewals()).toBe(3);
    expect(manager.size).toBe(0);
  });

  it('stops when a supplier that reports progress goes silent for the stall window', async () => {
    const { clock, task, lost } = setup({ stallTimeoutMs: 2500 });
    task.progress();
    await clock.advance(2000);
    task.progress();
    await clock.advance(2000);
    expect(lost).toEqual([]);
    await clock.advance(1000);
    expect(lost).toEqual(['stalled']);
  });

  it('reports a refused renewal as fenced, expired or cancelled', async () => {
    for (const refusal of ['fenced', 'expired', 'cancelled'] as const) {
      const { clock, lost } = setup({}, async () => refusal);
      await clock.advance(1000);
      expect(lost).toEqual([refusal]);
    }
  });

  it('survives failing renewals and only gives up once the lease may have lapsed; nothing throws from the timer', async () => {
    let failing = true;
    const { clock, lost, renewals } = setup({}, async () => {
      if (failing) throw new Error('ECONNRESET');
      return 'ok';
    });
    await clock.advance(2000);
    expect(lost).toEqual([]);
    failing = false;
    await clock.advance(1000);
    failing = true;
    await clock.advance(2000);
    expect(lost).toEqual([]);
    await clock.advance(1000);
    expect(lost).toEqual(['renewal-failed']);
    expect(renewals()).toBe(6);
  });

  it('contains a throwing lease-lost handler', async () => {
    const { clock } = setup({
      maxRunMs: 1000,
      onLost: () => {
        throw new Error('listener bug');
      },
    });
    await expect(clock.advance(2000)).resolves.toBeUndefined();
  });

  it('keeps tasks of one interval on one timer, and a task stopped before its first tick costs no timer', async () => {
    const clock = createManualClock();
    const manager = new HeartbeatManager(clock, silentLogger);
    let renewals = 0;
    const start = (i: number) =>
      manager.start({
        requestKey: `k${i}`,
        ownerToken: 't',
        intervalMs: 1000,
        takeoverAfterMs: 3000,
        maxRunMs: 60_000,
        stallTimeoutMs: 5000,
        renew: async () => {
          renewals++;
          return 'ok';
        },
        onLost: () => {},
      });
    const tasks = Array.from({ length: 100 }, (_, i) => start(i));
    expect(clock.pending).toBe(1); // one timer for the 100 tasks (before: 100)
    for (const task of tasks.slice(0, 99)) manager.stop(task.taskKey); // runs that ended before their first tick
    await clock.advance(1000);
    expect(renewals).toBe(1); // only the task still running renewed
    expect(clock.pending).toBe(1);
    manager.stop(tasks[99]!.taskKey);
    await clock.advance(1000);
    expect(clock.pending).toBe(0);
  });
});
