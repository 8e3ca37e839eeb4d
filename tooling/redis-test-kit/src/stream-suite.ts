/**
 * Streamed flights (`executeStream`) end to end over a Redis adapter with real Node processes, on the
 * shared Redis or on a local Redis Cluster: each adapter package registers it in one call.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSingleFlight } from '@flight/core';
import { createRedisCoordinator } from '@flight/redis-scripts';
import type { RedisAdapterUnderTest } from './adapter-suite';
import { countedDriver } from './counted-driver';
import { withoutTerminalNotices } from './lossy-driver';
import { deleteKeys, scanKeysWithoutTtl, sharedRedisUrl, startRedisCluster, type RedisCluster } from '@flight/test-servers';
import { startWorker, type Worker } from './multiprocess';
import type { StreamOutcome } from './worker';

const STAGE = 'stream';

/** The chunks a run of `nodeId` under `epoch` yields (see the worker's `stream` op). */
const runOf = (nodeId: string, epoch: number, n: number) => Array.from({ length: n }, (_, i) => `${nodeId}:${epoch}:${i}`);

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

export function registerStreamSuite(
  adapter: Pick<RedisAdapterUnderTest, 'name' | 'kind' | 'module' | 'driver'>,
  target: 'standalone' | 'cluster',
): void {
  const prefix = `flight-stream-${adapter.kind}-${randomUUID().slice(0, 8)}`;
  let cluster: RedisCluster | undefined;
  const servers = () => (cluster ? cluster.masters : [sharedRedisUrl()]);
  const workers: Worker[] = [];

  async function start(...nodeIds: string[]): Promise<Worker[]> {
    const started = await Promise.all(
      nodeIds.map((nodeId) =>
        startWorker({ adapter: adapter.kind, module: adapter.module, url: sharedRedisUrl(), prefix, nodeId, cluster: cluster?.masters }),
      ),
    );
    workers.push(...started);
    return started;
  }

  describe(`${adapter.name} (${target}): streamed flights across processes`, () => {
    beforeAll(async () => {
      if (target === 'cluster') cluster = await startRedisCluster({ masters: 3 });
    }, 60_000);
    afterAll(async () => {
      await Promise.all(workers.splice(0).map((w) => w.stop()));
      for (const server of servers()) expect(await scanKeysWithoutTtl(server, `${prefix}*`)).toEqual([]);
      for (const server of servers()) await deleteKeys(server, `${prefix}*`);
      await cluster?.stop();
    }, 30_000);

    it("3 processes × 100 callers of one streamed key: one supplier run, every caller receives exactly the owner's sequence; a late caller replays it without a run", async () => {
      const [a, b, c] = (await start('a', 'b', 'c')) as [Worker, Worker, Worker];
      const key = `herd-${randomUUID()}`;
      const command = { stage: STAGE, key, callers: 100, chunks: 20, gapMs: 25, onRestart: 'error', start: 'iterate' } as const;
      // Warm-up (connections, subscriber, slot maps), so the lag figure below is the steady state's.
      const warmUp = `warm-${randomUUID()}`;
      await Promise.all([a, b, c].map((w) => w.stream({ ...command, key: warmUp, callers: 1, chunks: 2 })));
      const results = await Promise.all([a, b, c].map((w) => w.stream(command)));
      expect(results.reduce((sum, r) => sum + r.runs, 0)).toBe(2);
      const outcomes = results.flatMap((r) => r.outcomes);
      expect(outcomes.every((o) => o.ok)).toBe(true);
      const { epoch } = outcomes[0]!;
      const owner = outcomes[0]!.items[0]!.split(':')[0]!;
      const sequence = runOf(owner, epoch!, 20);
      for (const outcome of outcomes) expect(outcome.items).toEqual(sequence);
      expect(outcomes.filter((o) => o.role === 'owner')).toHaveLength(1);
      const ownerFirst = outcomes.find((o) => o.role === 'owner')!.firstAt!;
      const lags = outcomes.filter((o) => o.role === 'follower').map((o) => o.firstAt! - ownerFirst);
      console.log(
        `[stream] ${JSON.stringify({ adapter: adapter.name, target, callers: 300, followerFirstChunkLagMs: { p50: quantile(lags, 0.5), p99: quantile(lags, 0.99) } })}`,
      );
      // After completion: replayed from the stored chunk list on another process, no run.
      const replay = await c.stream({ ...command, callers: 3 });
      expect(replay.runs).toBe(results[2]!.runs);
      for (const outcome of replay.outcomes) expect(outcome).toMatchObject({ ok: true, role: 'replay', items: sequence });
    }, 60_000);

    it('cancelWhenAbandoned: the only reader leaves → the run is cancelled and the next caller runs it anew; with a reader on another process it goes on', async () => {
      const [a, b] = (await start('a', 'b')) as [Worker, Worker];
      const until = async (what: string, ok: () => boolean) => {
        for (const giveUp = Date.now() + 5000; !ok(); await sleep(20)) if (Date.now() > giveUp) throw new Error(`timed out: ${what}`);
      };
      const alone = `abandoned-${randomUUID()}`;
      const command = { stage: STAGE, key: alone, callers: 1, chunks: 40, gapMs: 25, onRestart: 'error', start: 'iterate' } as const;
      const left = await a.stream({ ...command, stopAfter: 3, cancelWhenAbandoned: true });
      expect(left.outcomes[0]!.items).toHaveLength(3);
      await until('the abandoned run to be cancelled', () => a.abortedRuns(alone).length > 0);
      expect(a.abortedRuns(alone)).toEqual(['E_FLIGHT_CANCELLED']);
      const next = await b.stream({ ...command, chunks: 3, gapMs: 5 });
      expect(next.outcomes[0]).toMatchObject({ ok: true, role: 'owner', items: runOf('b', next.outcomes[0]!.epoch!, 3) });

      const watched = `watched-${randomUUID()}`;
      // A's run holds after its second chunk until B's reader has read both; then A's caller leaves at 8.
      const leaving = a.stream({ ...command, key: watched, chunks: 16, stopAfter: 8, cancelWhenAbandoned: true, holdAt: 2 });
      const epoch = await a.emitted(watched, 2);
      const reader = b.stream({ ...command, key: watched, chunks: 16 });
      await b.read(watched, 2);
      a.release(watched);
      expect((await leaving).outcomes[0]!.items).toHaveLength(8);
      const read = (await reader).outcomes[0];
      // On a failure, say whether the run was cancelled (A's supplier saw its signal abort) or B failed on its own.
      expect(read, `A's aborted runs: ${JSON.stringify(a.abortedRuns(watched))}`).toMatchObject({
        ok: true,
        role: 'follower',
        items: runOf('a', epoch, 16),
      });
      expect(a.abortedRuns(watched)).toEqual([]);
    }, 30_000);

    it('a caller joining after 60 % of the chunks catches up and receives the full sequence', async () => {
      const [a, b] = (await start('a', 'b')) as [Worker, Worker];
      const key = `late-${randomUUID()}`;
      const command = { stage: STAGE, key, callers: 1, chunks: 10, gapMs: 60, onRestart: 'error', start: 'iterate' } as const;
      const owner = a.stream(command);
      const epoch = await a.emitted(key, 6);
      const late = await b.stream({ ...command, callers: 5 });
      expect(late.runs).toBe(0);
      for (const outcome of [...late.outcomes, ...(await owner).outcomes])
        expect(outcome).toMatchObject({ ok: true, items: runOf('a', epoch, 10) });
    }, 30_000);

    it('resume (after): a caller that read 4 chunks on one process continues on another during the run and a third after it, one run; a gone stream runs nothing', async () => {
      const [a, b, c] = (await start('a', 'b', 'c')) as [Worker, Worker, Worker];
      const key = `resume-${randomUUID()}`;
      const command = { stage: STAGE, key, callers: 1, chunks: 10, gapMs: 60, onRestart: 'restart', start: 'iterate' } as const;
      const left = (await a.stream({ ...command, stopAfter: 4 })).outcomes[0]!;
      expect(left.items).toEqual(runOf('a', left.epoch!, 4));
      const during = await b.stream({ ...command, callers: 3, after: { epoch: left.epoch, index: 4 } });
      for (const outcome of during.outcomes) expect(outcome).toMatchObject({ ok: true, items: runOf('a', left.epoch!, 10).slice(4) });
      const after = await c.stream({ ...command, after: { epoch: left.epoch, index: 8 } });
      expect(after.outcomes[0]).toMatchObject({ ok: true, role: 'replay', items: runOf('a', left.epoch!, 10).slice(8) });
      expect(during.runs + after.runs).toBe(0);
      const gone = await b.stream({ ...command, key: `gone-${randomUUID()}`, after: { epoch: left.epoch, index: 2 } });
      expect(gone.outcomes[0]).toMatchObject({ ok: false, cause: 'E_FLIGHT_STREAM_EXPIRED', items: [] });
      expect(gone.runs).toBe(during.runs);
    }, 30_000);

    it('resume after the owner was SIGKILLed: resuming callers get the restart marker and the new run, run once', async () => {
      const [a, b, c] = (await start('a', 'b', 'c')) as [Worker, Worker, Worker];
      const key = `resume-kill-${randomUUID()}`;
      const command = { stage: STAGE, key, callers: 1, chunks: 8, gapMs: 80, onRestart: 'restart', start: 'iterate' } as const;
      void a.stream(command);
      await a.emitted(key, 1);
      // A client on b reads 3 chunks of a's run and goes away; a dies; the client comes back on c.
      const left = (await b.stream({ ...command, stopAfter: 3 })).outcomes[0]!;
      expect(left.items).toEqual(runOf('a', left.epoch!, 3));
      a.child.kill('SIGKILL');
      const resumed = await c.stream({ ...command, callers: 3, after: { epoch: left.epoch, index: 3 } });
      for (const outcome of resumed.outcomes) {
        expect(outcome.ok, JSON.stringify(outcome)).toBe(true);
        // What a's run still had after chunk 3 (if anything), then the marker and c's run from its start.
        const at = outcome.items.findIndex((item) => item.startsWith('restart:'));
        expect(outcome.items.slice(0, at)).toEqual(runOf('a', left.epoch!, 8).slice(3, 3 + at));
        const epoch = Number(outcome.items[at]!.split(':')[1]);
        expect(epoch).toBeGreaterThan(left.epoch!);
        // The new run: c's, or b's (b's caller left, but its call still waits for the outcome).
        const newOwner = outcome.items[at + 1]!.split(':')[0]!;
        expect(['b', 'c']).toContain(newOwner);
        expect(outcome.items.slice(at + 1)).toEqual(runOf(newOwner, epoch, 8));
      }
      expect(resumed.runs + (await b.stream({ ...command, callers: 0 })).runs).toBe(1);
    }, 30_000);

    it("SIGKILLed owner mid-stream: callers with chunks end with E_FLIGHT_STREAM_INTERRUPTED ('error') or get a restart marker and the new run ('restart'); callers without chunks follow the new run", async () => {
      const [a, b, c] = (await start('a', 'b', 'c')) as [Worker, Worker, Worker];
      const key = `kill-${randomUUID()}`;
      const command = { stage: STAGE, key, callers: 1, chunks: 10, gapMs: 80, onRestart: 'error', start: 'iterate' } as const;
      void a.stream(command);
      const firstEpoch = await a.emitted(key, 1);
      const erroring = b.stream({ ...command, callers: 3 });
      const restarting = c.stream({ ...command, callers: 3, onRestart: 'restart' });
      const idle = b.stream({ ...command, callers: 2, start: 'result-first' });
      await a.emitted(key, 5);
      const killedAt = Date.now();
      a.child.kill('SIGKILL');
      const [errored, restarted, followed] = await Promise.all([erroring, restarting, idle]);
      // Every caller that read the dead run learns its end within takeoverAfterMs (1200) + 1 s of the kill.
      const learnt = [...errored.outcomes.map((o) => o.endedAt!), ...restarted.outcomes.map((o) => o.restartAt!)].map(
        (at) => at - killedAt,
      );
      console.log(
        `[stream] ${JSON.stringify({ adapter: adapter.name, target, ownerKilled: { learntAfterMs: Math.max(...learnt), takeoverAfterMs: 1200 } })}`,
      );
      expect(Math.max(...learnt)).toBeLessThanOrEqual(1200 + 1000);
      // The new run: the other two processes ran it once between them, under a new epoch.
      expect((await b.stream({ ...command, callers: 0 })).runs + (await c.stream({ ...command, callers: 0 })).runs).toBe(1);
      const newRun = followed.outcomes[0]!;
      expect(newRun).toMatchObject({ ok: true });
      expect(newRun.epoch).toBeGreaterThan(firstEpoch);
      const newOwner = newRun.items[0]!.split(':')[0]!;
      const sequence = runOf(newOwner, newRun.epoch!, 10);
      for (const outcome of followed.outcomes) expect(outcome.items).toEqual(sequence);
      const abandoned = runOf('a', firstEpoch, 10);
      const hadChunks = (o: StreamOutcome) => o.items.length >= 4 && o.items.slice(0, 4).every((item, i) => item === abandoned[i]);
      for (const outcome of errored.outcomes) {
        expect(outcome).toMatchObject({ ok: false, code: 'E_FLIGHT_STREAM_INTERRUPTED' });
        expect(hadChunks(outcome)).toBe(true);
        expect(abandoned.slice(0, outcome.items.length)).toEqual(outcome.items);
      }
      for (const outcome of restarted.outcomes) {
        expect(outcome.ok).toBe(true);
        expect(hadChunks(outcome)).toBe(true);
        const marker = outcome.items.indexOf(`restart:${newRun.epoch}`);
        expect(outcome.items.slice(0, marker)).toEqual(abandoned.slice(0, marker));
        expect(outcome.items.slice(marker + 1)).toEqual(sequence);
      }
    }, 60_000);

    // Two nodes in this process, each with its own standalone driver (counted, or losing notices).
    if (target === 'standalone')
      it('a following node reads the stream about once per reader, not once per chunk: the chunks come with the notices', async () => {
        const sent: string[] = [];
        const node = (nodeId: string, counted?: string[]) => {
          const driver = adapter.driver(sharedRedisUrl());
          return createSingleFlight({
            coordinator: createRedisCoordinator(counted ? countedDriver(driver, counted) : driver, { prefix }),
            nodeId,
            defaults: { pollIntervalMs: 200, l1: { enabled: false } },
          });
        };
        const owner = node('owner');
        const follower = node('follower', sent);
        try {
          const key = `reads-${randomUUID()}`;
          const chunks = 40;
          let runs = 0;
          const supplier = async function* () {
            runs++;
            for (let i = 0; i < chunks; i++) {
              await sleep(15);
              yield `chunk-${i}`;
            }
          };
          const collect = async (stream: AsyncIterable<string>) => {
            const items: string[] = [];
            for await (const item of stream) items.push(item);
            return items;
          };
          const owned = collect(owner.executeStream(STAGE, key, supplier));
          await sleep(40);
          sent.length = 0;
          const followed = await Promise.all(Array.from({ length: 5 }, () => collect(follower.executeStream(STAGE, key, supplier))));
          const sequence = Array.from({ length: chunks }, (_, i) => `chunk-${i}`);
          expect(await owned).toEqual(sequence);
          for (const items of followed) expect(items).toEqual(sequence);
          expect(runs).toBe(1);
          // One read as the reader starts (and the read that confirms its subscription); a reader that
          // stopped whenever its callers were busy with the last batch would read once per chunk (~40).
          expect(sent.filter((name) => name === 'streamRead').length).toBeLessThanOrEqual(6);
        } finally {
          await Promise.all([owner.close(), follower.close()]);
        }
      }, 30_000);

    if (target === 'standalone')
      it('a following node that never hears the terminal notice still ends, by polling', async () => {
        const pollIntervalMs = 200;
        const lossy = withoutTerminalNotices(adapter.driver(sharedRedisUrl()));
        const node = (nodeId: string, driver = adapter.driver(sharedRedisUrl())) =>
          createSingleFlight({
            coordinator: createRedisCoordinator(driver, { prefix }),
            nodeId,
            // A wait that outlasts the test: only polling can end the followers' streams.
            defaults: { pollIntervalMs, waitTimeoutMs: 600_000, l1: { enabled: false } },
          });
        const owner = node('owner');
        const follower = node('follower', lossy.driver);
        try {
          const key = `lost-end-${randomUUID()}`;
          // The run goes on past its first chunk only once the following node has joined it, which it asks to
          // once the run has started.
          let joined!: () => void;
          const followersIn = new Promise<void>((resolve) => (joined = resolve));
          follower.on('follower', () => joined());
          let started!: () => void;
          const running = new Promise<void>((resolve) => (started = resolve));
          const supplier = async function* () {
            started();
            for (let i = 0; i < 10; i++) {
              if (i === 1) await followersIn;
              await sleep(20);
              yield `chunk-${i}`;
            }
          };
          const collect = async (stream: AsyncIterable<string>) => {
            const items: string[] = [];
            for await (const item of stream) items.push(item);
            return { items, endedAt: Date.now() };
          };
          const owned = collect(owner.executeStream(STAGE, key, supplier));
          await running;
          const followed = await Promise.all(Array.from({ length: 3 }, () => collect(follower.executeStream(STAGE, key, supplier))));
          const ownerEnd = await owned;
          const sequence = Array.from({ length: 10 }, (_, i) => `chunk-${i}`);
          expect(ownerEnd.items).toEqual(sequence);
          expect(lossy.lost()).toBeGreaterThan(0);
          const lateMs = Math.max(...followed.map((f) => f.endedAt)) - ownerEnd.endedAt;
          console.log(
            `[stream] ${JSON.stringify({ adapter: adapter.name, lostTerminalNotice: { endedAfterOwnerMs: lateMs, pollIntervalMs } })}`,
          );
          for (const f of followed) expect(f.items).toEqual(sequence);
        } finally {
          await Promise.all([owner.close(), follower.close()]);
        }
      }, 30_000);

    it("a stale owner's appends are refused: a paused owner resumed after a takeover follows the new run", async () => {
      const [a, b] = (await start('a', 'b')) as [Worker, Worker];
      const key = `stale-${randomUUID()}`;
      const command = { stage: STAGE, key, callers: 2, chunks: 8, gapMs: 60, onRestart: 'restart', start: 'iterate' } as const;
      const stale = a.stream(command);
      const firstEpoch = await a.emitted(key, 2);
      const fresh = b.stream({ ...command, start: 'result-first' });
      a.child.kill('SIGSTOP');
      const newEpoch = await b.emitted(key, 2);
      a.child.kill('SIGCONT');
      expect(newEpoch).toBeGreaterThan(firstEpoch);
      const sequence = runOf('b', newEpoch, 8);
      for (const outcome of (await fresh).outcomes) expect(outcome).toMatchObject({ ok: true, items: sequence, epoch: newEpoch });
      // The resumed owner's next append was refused: its callers got the new run after a restart marker,
      // and nothing of its run was stored.
      for (const outcome of (await stale).outcomes) {
        expect(outcome.ok).toBe(true);
        expect(outcome.items.slice(outcome.items.indexOf(`restart:${newEpoch}`) + 1)).toEqual(sequence);
      }
      const replay = await a.stream({ ...command, callers: 1 });
      expect(replay.outcomes[0]).toMatchObject({ ok: true, role: 'replay', items: sequence });
    }, 60_000);
  });
}
