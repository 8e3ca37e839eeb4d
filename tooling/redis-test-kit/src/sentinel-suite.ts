/**
 * A Redis failover under a flight, through Sentinel (one primary, one replica, three Sentinels, each a real
 * process), with three application processes connected through the Sentinels: a graceful failover and a
 * SIGKILLed primary while the run is in progress. Every caller on every process is answered with the run's
 * value, within its wait, without a coordination error: the owner's lease outlasts the failover, and the
 * followers ride it out (they ask again while their coordinator does not answer). Figures are printed.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSentinelTopology, type SentinelTopology } from '@flight/test-servers';
import { startWorker, type Worker } from './multiprocess';

export interface SentinelAdapter {
  name: string;
  kind: 'ioredis' | 'node-redis';
  /** Absolute path of the adapter's entry (its src/index.ts). */
  module: string;
}

/** A lease that outlasts a failover (Sentinel's down-after 3 s, then the election), and a wait longer still. */
const STAGE = { takeoverAfterMs: 10_000, leaseTtlMs: 20_000, maxRunMs: 60_000, waitTimeoutMs: 30_000, pollIntervalMs: 200 };

export function registerSentinelSuite(adapter: SentinelAdapter): void {
  describe(`${adapter.name}: a Redis failover through Sentinel`, () => {
    let topology: SentinelTopology;
    let workers: Worker[] = [];
    beforeAll(async () => {
      topology = await startSentinelTopology({ downAfterMs: 3000 });
      const sentinel = { name: topology.name, sentinels: topology.sentinels };
      const prefix = `sentinel-${randomUUID().slice(0, 8)}`;
      workers = await Promise.all(
        ['a', 'b', 'c'].map((nodeId) =>
          startWorker({
            adapter: adapter.kind,
            module: adapter.module,
            url: '',
            sentinel,
            prefix,
            nodeId,
            stages: { failover: STAGE },
          }),
        ),
      );
    }, 60_000);
    afterAll(async () => {
      await Promise.all(workers.map((w) => w.stop()));
      await topology?.stop();
    });

    for (const fault of ['graceful', 'sigkill'] as const) {
      it(`${fault === 'graceful' ? 'SENTINEL FAILOVER' : 'the primary SIGKILLed'} mid-run: every caller on every process gets the run's value, no coordination error`, async () => {
        const [a, b, c] = workers as [Worker, Worker, Worker];
        const key = `${fault}-${randomUUID()}`;
        const runsBefore = (
          await Promise.all(
            workers.map((w) =>
              w.burst({ stage: 'failover', key: `warm-${randomUUID()}`, callers: 1, behavior: 'value', delayMs: 0, value: 'w' }),
            ),
          )
        ).reduce((sum, r) => sum + r.runs, 0);
        const running = a.nextRunning();
        // A's run lasts 8 s: long enough for B's and C's callers to join it and for the failover to happen in it.
        const owner = a.burst({ stage: 'failover', key, callers: 10, behavior: 'value', delayMs: 8000, value: 'v' });
        await running;
        const followers = [b, c].map((w) => w.burst({ stage: 'failover', key, callers: 10, behavior: 'value', delayMs: 8000, value: 'v' }));
        await Promise.all([b.followed(key), c.followed(key)]);
        const before = await topology.primaryPort();
        const startedAt = Date.now();
        const promoted = fault === 'graceful' ? await topology.failover() : await topology.killPrimary();
        const failoverMs = Date.now() - startedAt;
        const results = await Promise.all([owner, ...followers]);
        const outcomes = results.flatMap((r) => r.outcomes);
        const runs = results.reduce((sum, r) => sum + r.runs, 0) - runsBefore;
        console.log(
          `[sentinel] ${JSON.stringify({ adapter: adapter.name, fault, failoverMs, callers: outcomes.length, runs, codes: outcomes.filter((o) => !o.ok).map((o) => o.code) })}`,
        );
        expect(promoted).not.toBe(before);
        expect(outcomes).toHaveLength(30);
        for (const outcome of outcomes) expect(outcome).toMatchObject({ ok: true, value: 'v@a' });
        expect(runs).toBe(1);
        if (fault === 'sigkill') await topology.revive(before);
      }, 90_000);
    }
  });
}
