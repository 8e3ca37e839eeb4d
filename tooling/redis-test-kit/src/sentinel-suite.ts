/**
 * A Redis failover under a flight, through Sentinel (one primary, one replica, three Sentinels, each a real
 * process), with three application processes connected through the Sentinels: a graceful failover and a
 * SIGKILLed primary while the run is in progress. Every caller on every process is answered with the run's
 * value, within its wait, without a coordination error: the owner's lease outlasts the failover, and the
 * followers ride it out (they ask again while their coordinator does not answer). Then the primary SIGKILLed
 * while its replica is cut off, round after round: with strict acknowledgement (`waitReplicas.unacknowledged:
 * 'retry'`) no round runs twice; without it the count of rounds that did is printed. Figures are printed.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { flightKeys } from '@flight/redis-scripts';
import { rawCommand, sleep, startSentinelTopology, type SentinelTopology } from '@flight/test-servers';
import { startWorker, type Worker } from './multiprocess';

export interface SentinelAdapter {
  name: string;
  kind: 'ioredis' | 'node-redis';
  /** Absolute path of the adapter's entry (its src/index.ts). */
  module: string;
}

/**
 * A lease that outlasts a failover (Sentinel's down-after 3 s, then the election), and a wait longer still: on a
 * loaded machine an election can fail, and a Sentinel tries again only after twice its failover timeout.
 */
const STAGE = { takeoverAfterMs: 10_000, leaseTtlMs: 20_000, maxRunMs: 120_000, waitTimeoutMs: 90_000, pollIntervalMs: 200 };

/** Rounds of the primary SIGKILLed while its replica is cut off, with strict acknowledgement and without. */
const STRICT_ROUNDS = 10;
const PLAIN_ROUNDS = 3;

/** Strict acknowledgement: one replica, each WAIT 100 ms, taking ownership retried for as long as a wait lasts. */
const STRICT = { replicas: 1, timeoutMs: 100, unacknowledged: 'retry', retryForMs: 90_000 } as const;

/** A topology of the test's own and three application processes on it (`waitReplicas` when given). */
interface Cluster {
  topology: SentinelTopology;
  workers: [Worker, Worker, Worker];
  prefix: string;
}

export function registerSentinelSuite(adapter: SentinelAdapter): void {
  describe(`${adapter.name}: a Redis failover through Sentinel`, () => {
    // Each test starts from a topology of its own: the clients and Sentinels of one fault never meet the next.
    let running: Cluster | undefined;
    /** An application process connected through `topology`'s Sentinels. */
    const connect = (topology: SentinelTopology, prefix: string, nodeId: string, waitReplicas?: typeof STRICT) =>
      startWorker({
        adapter: adapter.kind,
        module: adapter.module,
        url: '',
        sentinel: { name: topology.name, sentinels: topology.sentinels },
        prefix,
        nodeId,
        stages: { failover: STAGE },
        ...(waitReplicas ? { waitReplicas } : {}),
      });
    /** Processes started by a test besides its cluster's three. */
    const extra: Worker[] = [];
    async function cluster(waitReplicas?: typeof STRICT): Promise<Cluster> {
      const topology = await startSentinelTopology({ downAfterMs: 3000 });
      const prefix = `sentinel-${randomUUID().slice(0, 8)}`;
      running = { topology, workers: [] as unknown as Cluster['workers'], prefix };
      running.workers = (await Promise.all(
        ['a', 'b', 'c'].map((nodeId) => connect(topology, prefix, nodeId, waitReplicas)),
      )) as Cluster['workers'];
      return running;
    }
    afterEach(async () => {
      await Promise.all([...(running?.workers ?? []), ...extra.splice(0)].map((w) => w.stop()));
      await running?.topology.stop();
      running = undefined;
    });

    /** Supplier runs so far on `workers` (each counts its own), after one more run each. */
    const runsOf = async (workers: Worker[]) =>
      (
        await Promise.all(
          workers.map((w) =>
            w.burst({ stage: 'failover', key: `count-${randomUUID()}`, callers: 1, behavior: 'value', delayMs: 0, value: 'w' }),
          ),
        )
      ).reduce((sum, r) => sum + r.runs, 0);

    /**
     * One round: the replica cut off, A takes `key` (held), B and C join it, the primary is SIGKILLed and the
     * replica promoted without A's record, the old primary comes back as a replica, the holds are released.
     * Resolves with the supplier runs of the round and every caller's outcome.
     */
    async function cutOffRound({ topology, workers, prefix }: Cluster, key: string) {
      const [a, b, c] = workers;
      const before = await runsOf(workers);
      const oldPrimary = await topology.primaryPort();
      await topology.cutReplica();
      const call = (w: Worker) => w.burst({ stage: 'failover', key, callers: 5, behavior: 'value', delayMs: 0, value: 'v', hold: true });
      const owner = call(a);
      const meta = flightKeys(prefix, { stage: 'failover', key }).meta;
      while ((await rawCommand(oldPrimary, ['EXISTS', meta])) !== 1) await sleep(10);
      const followers = [b, c].map(call);
      await Promise.all([b.followed(key), c.followed(key)]);
      await topology.killPrimary();
      await topology.revive(oldPrimary);
      for (const w of workers) w.release(key);
      const results = await Promise.all([owner, ...followers]);
      const outcomes = results.flatMap((r) => r.outcomes);
      // The count bursts ran once per worker each time.
      const runs = (await runsOf(workers)) - before - workers.length;
      return { runs, outcomes };
    }

    for (const fault of ['graceful', 'sigkill'] as const) {
      it(`${fault === 'graceful' ? 'SENTINEL FAILOVER' : 'the primary SIGKILLed'} mid-run: every caller on every process gets the run's value, no coordination error`, async () => {
        const { topology, workers } = await cluster();
        const [a, b, c] = workers;
        const key = `${fault}-${randomUUID()}`;
        const runsBefore = await runsOf(workers);
        const started = a.nextRunning();
        // A's run lasts 8 s: long enough for B's and C's callers to join it and for the failover to happen in it.
        const owner = a.burst({ stage: 'failover', key, callers: 10, behavior: 'value', delayMs: 8000, value: 'v' });
        await started;
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
      }, 150_000);
    }

    it('after a SENTINEL FAILOVER, a process connected before and one that connects afresh share one run (the old primary, not yet a replica, takes no flight)', async () => {
      const { topology, workers, prefix } = await cluster();
      const [a, b] = workers;
      const before = await topology.primaryPort();
      expect(await topology.failover()).not.toBe(before);
      // The Sentinels turn the old primary into a replica only when they next look at it (up to 10 s): until
      // then it still takes writes, from any client that stayed on it.
      const fresh = await connect(topology, prefix, 'd');
      extra.push(fresh);
      const runsBefore = await runsOf([a, b, fresh]);
      const key = `fresh-${randomUUID()}`;
      const started = [a, b, fresh].map((w) => Promise.race([w.nextRunning(), w.followed(key)]));
      const calls = [a, b, fresh].map((w) =>
        w.burst({ stage: 'failover', key, callers: 3, behavior: 'value', delayMs: 0, value: 'v', hold: true }),
      );
      await Promise.all(started);
      for (const w of [a, b, fresh]) w.release(key);
      const outcomes = (await Promise.all(calls)).flatMap((r) => r.outcomes);
      const runs = (await runsOf([a, b, fresh])) - runsBefore - 3;
      console.log(`[sentinel] ${JSON.stringify({ adapter: adapter.name, fault: 'graceful-then-fresh-process', runs })}`);
      expect(outcomes.filter((o) => !o.ok)).toEqual([]);
      expect(new Set(outcomes.map((o) => o.value)).size).toBe(1);
      expect(runs).toBe(1);
    }, 150_000);

    for (const strict of [true, false]) {
      const rounds = strict ? STRICT_ROUNDS : PLAIN_ROUNDS;
      it(
        `the primary SIGKILLed while its replica is cut off, ${rounds} rounds ${strict ? 'with strict acknowledgement: never a second run' : 'without strict acknowledgement: the figure'}`,
        async () => {
          const setup = await cluster(strict ? STRICT : undefined);
          const perRound: number[] = [];
          const codes: (string | undefined)[] = [];
          for (let round = 0; round < rounds; round++) {
            const { runs, outcomes } = await cutOffRound(setup, `cut-${strict ? 'strict' : 'plain'}-${round}-${randomUUID()}`);
            perRound.push(runs);
            codes.push(...outcomes.filter((o) => !o.ok).map((o) => o.code));
            expect(outcomes).toHaveLength(15);
            if (!strict) continue;
            expect(outcomes.filter((o) => !o.ok)).toEqual([]);
            expect(new Set(outcomes.map((o) => o.value)).size).toBe(1);
          }
          console.log(
            `[sentinel] ${JSON.stringify({ adapter: adapter.name, fault: 'sigkill-replica-cut-off', strict, rounds, runsPerRound: perRound, doubleRuns: perRound.filter((n) => n > 1).length, codes })}`,
          );
          if (strict) expect(perRound).toEqual(Array.from({ length: rounds }, () => 1));
        },
        90_000 * rounds,
      );
    }
  });
}
