/**
 * Forget across the cluster (Go's `singleflight.Forget`, golang/go#31420), end to end over a Redis adapter
 * with real Node processes: each adapter package registers it in one call.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { RedisAdapterUnderTest } from './adapter-suite';
import { deleteKeys, scanKeysWithoutTtl, sharedRedisUrl, sleep } from '@flight/test-servers';
import { startWorker } from './multiprocess';

export function registerForgetSuite(adapter: Pick<RedisAdapterUnderTest, 'name' | 'kind' | 'module'>): void {
  const url = sharedRedisUrl();
  const prefix = `flight-forget-${adapter.kind}-${randomUUID().slice(0, 8)}`;

  describe(`${adapter.name}: forget across processes`, () => {
    afterAll(async () => {
      expect(await scanKeysWithoutTtl(url, `${prefix}*`)).toEqual([]);
      await deleteKeys(url, `${prefix}*`);
    });

    it("follows Go's Forget sequence: running → forget (another process) → a new run → later callers get the new value", async () => {
      const workers = await Promise.all(
        ['first', 'second', 'third'].map((nodeId) => startWorker({ adapter: adapter.kind, module: adapter.module, url, prefix, nodeId })),
      );
      const [a, b, c] = workers as [(typeof workers)[0], (typeof workers)[0], (typeof workers)[0]];
      try {
        const key = 'go-sequence';
        // 1. The first call is running on process A (3 callers there).
        const firstRunning = a.nextRunning();
        const first = a.burst({ stage: 'forget', key, callers: 3, behavior: 'value', delayMs: 1500, value: 'first' });
        let firstFinished = false;
        void first.then(() => (firstFinished = true));
        const firstEpoch = await firstRunning;
        // 2. Process C forgets it; it resolves once Redis recorded it.
        expect(await c.forget('forget', key)).toBe(true);
        // 3. The second call, on process B, starts a new run instead of joining the first.
        const secondRunning = b.nextRunning();
        const second = b.burst({ stage: 'forget', key, callers: 2, behavior: 'value', delayMs: 3000, value: 'second' });
        const secondEpoch = await secondRunning;
        expect(secondEpoch).toBeGreaterThan(firstEpoch);
        // It started while the first still ran (not after it, nor after a takeover of its lease).
        expect(firstFinished).toBe(false);
        // The first call's callers still get the first run's value.
        const firstDone = await first;
        expect(firstDone.runs).toBe(1);
        expect(firstDone.outcomes.map((o) => o.value)).toEqual(['first@first', 'first@first', 'first@first']);
        expect(firstDone.outcomes.every((o) => o.ok && o.epoch === firstEpoch)).toBe(true);
        // 4. A third call, after the first finished, joins the second run and gets its value.
        const third = await c.burst({ stage: 'forget', key, callers: 2, behavior: 'value', delayMs: 10, value: 'third' });
        expect(third.runs).toBe(0);
        expect(third.outcomes).toMatchObject([
          { ok: true, value: 'second@second', role: 'follower', epoch: secondEpoch },
          { ok: true, value: 'second@second', role: 'follower', epoch: secondEpoch },
        ]);
        const secondDone = await second;
        expect(secondDone.runs).toBe(1);
        expect(secondDone.outcomes.map((o) => [o.value, o.role])).toEqual([
          ['second@second', 'owner'],
          ['second@second', 'follower'],
        ]);
        // The first run's late completion was not stored: a later caller replays the second value.
        const replay = await a.burst({ stage: 'forget', key, callers: 1, behavior: 'value', delayMs: 10, value: 'late' });
        expect(replay.outcomes[0]).toMatchObject({ ok: true, value: 'second@second', role: 'replay', epoch: secondEpoch });
        expect(replay.runs).toBe(1);

        // 5. forget on a stored result drops it (a purge): the next caller runs again.
        expect(await b.forget('forget', key)).toBe(true);
        const rerun = await c.burst({ stage: 'forget', key, callers: 2, behavior: 'value', delayMs: 10, value: 'fresh' });
        expect(rerun.runs).toBe(1);
        expect(rerun.outcomes.map((o) => o.value)).toEqual(['fresh@third', 'fresh@third']);
        expect(rerun.outcomes[0]!.epoch).toBeGreaterThan(secondEpoch);
        // Nothing to forget: false.
        expect(await a.forget('forget', 'never-ran')).toBe(false);
      } finally {
        await Promise.all(workers.map((w) => w.stop()));
      }
    });

    it('reaches every node that keeps an L1 copy: once its notice arrives, no process serves the old value (3 processes)', async () => {
      const workers = await Promise.all(
        ['l1-a', 'l1-b', 'l1-c'].map((nodeId) =>
          startWorker({ adapter: adapter.kind, module: adapter.module, url, prefix, nodeId, l1TtlMs: 60_000 }),
        ),
      );
      const [a, b, c] = workers as [(typeof workers)[0], (typeof workers)[0], (typeof workers)[0]];
      const read = (w: typeof a, key: string, value: string) =>
        w.burst({ stage: 'forget-l1', key, callers: 1, behavior: 'value', delayMs: 5, value });
      const delays: number[] = [];
      try {
        for (let round = 0; round < 5; round++) {
          const key = `l1-${round}`;
          const first = await read(a, key, 'old');
          // B and C read it until they serve it from L1: a flight read twice on a node is listened to, and a
          // read after the listening is confirmed fills L1 (how soon depends on the machine's load).
          for (const w of [b, c]) {
            let role = '';
            for (let i = 0; i < 500 && role !== 'l1'; i++) {
              role = (await read(w, key, 'new')).outcomes[0]!.role!;
              if (role !== 'l1') await sleep(20);
            }
            expect(role, `${key} on ${w === b ? 'B' : 'C'}`).toBe('l1');
          }
          // A forgets it; B and C hear it, and from then on never serve the old value.
          expect(await a.forget('forget-l1', key)).toBe(true);
          const resolvedAt = Date.now();
          for (const w of [b, c]) {
            await w.heardForget(key);
            const after = await read(w, key, 'new');
            expect(after.outcomes[0]!.value, `${key} after the forget`).not.toBe(first.outcomes[0]!.value);
            expect(after.outcomes[0]!.role).not.toBe('l1');
            delays.push(Math.max(0, w.forgottenAt(key)[0]! - resolvedAt));
          }
        }
        delays.sort((x, y) => x - y);
        // How soon the notice arrives is a figure (bench scenario 10 measures it), not a bound of this test.
        console.log(
          `[forget] ${JSON.stringify({ name: 'l1-invalidation-delay', adapter: adapter.kind, samples: delays.length, maxMs: delays.at(-1) })}`,
        );
      } finally {
        await Promise.all(workers.map((w) => w.stop()));
      }
    });
  });
}
