/**
 * Stale values across processes (the stage option `stale`: stale-while-revalidate and stale-if-error once
 * per cluster), end to end over a Redis adapter with real Node processes, on the shared Redis or a local
 * Redis Cluster: each adapter package registers it in one call.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagePolicyInput } from '@flight/core';
import type { RedisAdapterUnderTest } from './adapter-suite';
import { deleteKeys, scanKeysWithoutTtl, sharedRedisUrl, sleep, startRedisCluster, type RedisCluster } from '@flight/test-servers';
import { startWorker, type BurstResult, type Worker } from './multiprocess';
import type { CallOutcome } from './worker';

/** Fresh for 1 s, then served at once while a refresh runs for 30 s. */
const REVALIDATE: StagePolicyInput = { resultTtlMs: 1000, stale: { whileRevalidateMs: 30_000, ifErrorMs: 30_000 } };
/** Fresh for 1 s, served while revalidating for 0.5 s more, in place of errors for 3 s more; one refresh a second. */
const ON_ERROR: StagePolicyInput = { resultTtlMs: 1000, stale: { whileRevalidateMs: 500, ifErrorMs: 3000, retryAfterMs: 1000 } };

const outcomesOf = (bursts: BurstResult[]): CallOutcome[] => bursts.flatMap((b) => b.outcomes);

export function registerStaleSuite(
  adapter: Pick<RedisAdapterUnderTest, 'name' | 'kind' | 'module'>,
  target: 'standalone' | 'cluster',
): void {
  const prefix = `flight-stale-${adapter.kind}-${target}-${randomUUID().slice(0, 8)}`;
  let cluster: RedisCluster | undefined;
  const servers = () => (cluster ? cluster.masters : [sharedRedisUrl()]);
  const start = (names: string[]) =>
    Promise.all(
      names.map((nodeId) =>
        startWorker({
          adapter: adapter.kind,
          module: adapter.module,
          url: sharedRedisUrl(),
          prefix,
          nodeId,
          cluster: cluster?.masters,
          stages: { swr: REVALIDATE, sie: ON_ERROR },
        }),
      ),
    ) as Promise<[Worker, Worker, Worker]>;

  describe(`${adapter.name} (${target}): stale values across processes`, () => {
    beforeAll(async () => {
      if (target === 'cluster') cluster = await startRedisCluster({ masters: 3 });
    }, 120_000);
    afterAll(async () => {
      for (const server of servers()) expect(await scanKeysWithoutTtl(server, `${prefix}*`)).toEqual([]);
      for (const server of servers()) await deleteKeys(server, `${prefix}*`);
      await cluster?.stop();
    }, 30_000);

    it('3 processes × 100 callers on an expired key: the stale value at once for all, 1 refresh, then the refreshed value', async () => {
      const workers = await start(['a', 'b', 'c']);
      try {
        const key = 'herd';
        await workers[0].burst({ stage: 'swr', key, callers: 1, behavior: 'value', delayMs: 10, value: 'v1' });
        await sleep(1200); // past the fresh time
        // The refresh takes 1.5 s: nobody waits for it (a caller that did would get its value, as a follower).
        const herd = await Promise.all(
          workers.map((w) => w.burst({ stage: 'swr', key, callers: 100, behavior: 'value', delayMs: 1500, value: 'v2' })),
        );
        const outcomes = outcomesOf(herd);
        expect(outcomes).toHaveLength(300);
        for (const o of outcomes) expect(o).toMatchObject({ ok: true, value: 'v1@a', role: 'stale' });
        for (const o of outcomes) expect(o.ageMs).toBeGreaterThanOrEqual(1100);
        console.log(
          `[stale] ${JSON.stringify({ name: 'stale-herd', adapter: adapter.kind, target, callers: 300, maxCallerMs: Math.max(...outcomes.map((o) => o.tookMs ?? 0)) })}`,
        );
        // The refresh is stored once a caller that never takes a stale value has its value: it joins the refresh
        // still running (and is woken by its completion) or replays the stored one.
        const joined = await workers[0].burst({ stage: 'swr', key, callers: 1, behavior: 'value', delayMs: 10, value: 'v3', fresh: true });
        expect(joined.outcomes[0]).toMatchObject({ ok: true, value: expect.stringMatching(/^v2@[abc]$/) });
        const after = await Promise.all(
          workers.map((w) => w.burst({ stage: 'swr', key, callers: 10, behavior: 'value', delayMs: 10, value: 'v3' })),
        );
        const values = new Set(outcomesOf(after).map((o) => `${o.value}/${o.role}`));
        expect(values.size).toBe(1);
        expect([...values][0]).toMatch(/^v2@[abc]\/replay$/);
        // One run for v1, one refresh across the cluster.
        expect(after.reduce((sum, b) => sum + b.runs, 0)).toBe(2);
      } finally {
        await Promise.all(workers.map((w) => w.stop()));
      }
    });

    it('the refresh owner SIGKILLed: the stale value is still served, one takeover refreshes it', async () => {
      const workers = await start(['a', 'b', 'c']);
      const [a, b, c] = workers;
      try {
        const key = 'killed';
        await a.burst({ stage: 'swr', key, callers: 1, behavior: 'value', delayMs: 10, value: 'v1' });
        await sleep(1200);
        // B's caller gets the stale value and B refreshes, hanging; then B dies.
        const refreshing = b.nextRunning();
        const first = await b.burst({ stage: 'swr', key, callers: 1, behavior: 'hang', delayMs: 0, value: 'never' });
        expect(first.outcomes[0]).toMatchObject({ ok: true, value: 'v1@a', role: 'stale' });
        await refreshing;
        b.child.kill('SIGKILL');
        // A and C keep answering with the stale value until one of them takes the refresh over (takeoverAfterMs 1.2 s).
        const seen: CallOutcome[] = [];
        // Until the refreshed value shows (and a round after it), within v2's fresh second so no new refresh starts.
        const until = Date.now() + 4000;
        let refreshedRounds = 0;
        while (Date.now() < until && refreshedRounds < 2) {
          const round = outcomesOf(
            await Promise.all([a, c].map((w) => w.burst({ stage: 'swr', key, callers: 5, behavior: 'value', delayMs: 400, value: 'v2' }))),
          );
          seen.push(...round);
          if (round.some((o) => o.value !== 'v1@a')) refreshedRounds++;
          await sleep(100);
        }
        for (const o of seen) expect(o.ok).toBe(true);
        for (const o of seen) expect(o.role).not.toBe('follower'); // never waited for a refresh
        expect(seen[0]).toMatchObject({ value: 'v1@a', role: 'stale' });
        const last = seen.at(-1)!;
        expect(last.value).toMatch(/^v2@[ac]$/);
        const runs = await Promise.all(
          [a, c].map(async (w) => (await w.burst({ stage: 'swr', key, callers: 1, behavior: 'value', delayMs: 10, value: 'x' })).runs),
        );
        expect(runs[0]! + runs[1]!).toBe(2); // v1 and the one takeover's refresh
      } finally {
        await Promise.all(workers.map((w) => w.stop()));
      }
    });

    it('a failing refresh: the stale value until the error window ends (one refresh a second), then the failure', async () => {
      const workers = await start(['a', 'b', 'c']);
      try {
        const key = 'failing';
        // The value is stored during this burst: its windows are counted from a moment between these two.
        const storedAfter = Date.now();
        await workers[0].burst({ stage: 'sie', key, callers: 1, behavior: 'value', delayMs: 10, value: 'v1' });
        const storedBefore = Date.now();
        await sleep(1100);
        const seen: CallOutcome[] = [];
        // Fresh until 1 s, errors answered stale until 4 s.
        while (Date.now() < storedAfter + 3700) {
          const round = await Promise.all(
            workers.map((w) => w.burst({ stage: 'sie', key, callers: 10, behavior: 'fail-soft', delayMs: 50, value: 'x' })),
          );
          seen.push(...outcomesOf(round));
          await sleep(50);
        }
        // A call that ended within 4 s of the earliest store is inside the window; one that a loaded machine
        // held past it may get the failure, and nothing else.
        const inWindow = seen.filter((o) => o.startedAt! + o.tookMs! <= storedAfter + 4000);
        for (const o of inWindow) expect(o).toMatchObject({ ok: true, value: 'v1@a', role: 'stale' });
        const answer = (o: CallOutcome) => (o.ok ? `${o.value} ${o.role}` : o.errorType);
        expect(seen.map(answer).filter((a) => a !== 'v1@a stale' && a !== 'PROVIDER')).toEqual([]);
        expect(inWindow.length).toBeGreaterThanOrEqual(60);
        const lateFailures = seen.some((o) => !o.ok);
        await sleep(storedBefore + 5300 - Date.now()); // past the error window and the last failure's retry interval
        const failed = outcomesOf(
          await Promise.all(workers.map((w) => w.burst({ stage: 'sie', key, callers: 5, behavior: 'fail-soft', delayMs: 50, value: 'x' }))),
        );
        for (const o of failed) expect(o).toMatchObject({ ok: false, errorType: 'PROVIDER' });
        const runs = (
          await Promise.all(workers.map((w) => w.burst({ stage: 'other', key, callers: 1, behavior: 'value', delayMs: 1, value: 'x' })))
        ).map((r) => r.runs - 1);
        const refreshes = runs.reduce((sum, n) => sum + n, 0) - 1; // less the first run (v1) and the last failure
        // One refresh about every second while errors were answered stale (2.7 s): 3, at most 4 (one more for
        // calls a loaded machine held past the window, which ran and failed).
        expect(refreshes).toBeGreaterThanOrEqual(2);
        expect(refreshes).toBeLessThanOrEqual(lateFailures ? 5 : 4);
      } finally {
        await Promise.all(workers.map((w) => w.stop()));
      }
    });
  });
}
