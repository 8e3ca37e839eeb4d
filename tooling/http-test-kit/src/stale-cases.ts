/**
 * The middleware suite's stale cases (RFC 5861 once per cluster, `serveStale: true`): past its freshness a
 * response's `stale-while-revalidate` lets every request on every node have it at once while one request's
 * handler refreshes it, and its `stale-if-error` answers in place of a failed refresh; without `serveStale`,
 * or under `must-revalidate`, `private` or `no-store`, it is never served stale. Two nodes (servers with
 * their own single-flight and coordinator) over the shared Redis, behind one public `Host`.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { createMemoryCoordinator, createSingleFlight, FlightConfigurationError } from '@flight/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WAIT_FOR_EFFECT } from '@flight/test-servers';
import type { Driver, Reply } from './middleware-suite.js';
import { publicGet as get } from './public-get.js';
import { requestedPath, startTwoNodes } from './two-nodes.js';

/** The `Cache-Control` a route answers with, by its path `/r/<case>/...`. */
const CASES: Record<string, string> = {
  swr: 'public, max-age=1, stale-while-revalidate=30',
  sie: 'public, max-age=1, stale-if-error=30',
  'swr-must-revalidate': 'public, max-age=1, must-revalidate, stale-while-revalidate=30',
  'swr-private': 'private, max-age=1, stale-while-revalidate=30',
};

export function registerStaleCases(driver: Driver): void {
  describe('stale responses (RFC 5861, once per cluster) on two nodes over Redis', () => {
    const closing: Array<() => Promise<void>> = [];
    afterEach(async () => {
      for (const close of closing.splice(0).reverse()) await close();
    });

    /**
     * Two nodes serving the cases; each run of a path answers `<path> #<n>` after `delayMs`, n counting its
     * runs, with status 500 when `failing` is set.
     */
    async function twoNodes(serveStale: boolean, delayMs = 300) {
      const runs = new Map<string, number>();
      // `hold`: the handler waits for it instead of `delayMs` (a refresh that lasts until the test says).
      const state: { failing: boolean; hold?: Promise<void> } = { failing: false };
      const nodes = await startTwoNodes(driver, closing, {
        prefix: `t:stale:${randomBytes(4).toString('hex')}:`,
        stage: 'stale',
        options: { serveStale },
        defaults: { l1: { enabled: true } },
        handler: async (req): Promise<Reply> => {
          const path = requestedPath(req.path);
          const n = (runs.get(path) ?? 0) + 1;
          runs.set(path, n);
          await (state.hold ?? sleep(delayMs));
          const cacheControl = CASES[path.split('/')[2]!]!;
          const status = state.failing ? 500 : 200;
          return { kind: 'text', status, headers: { 'content-type': 'text/plain', 'cache-control': cacheControl }, body: `${path} #${n}` };
        },
      });
      return { nodes, runs: (path: string) => runs.get(path) ?? 0, state };
    }

    const pathOf = (name: string) => `/r/${name}/${randomBytes(3).toString('hex')}`;

    it('stale-while-revalidate: past max-age, every request on both nodes gets it at once, with Age, while one request refreshes it', async () => {
      const { nodes, runs, state } = await twoNodes(true);
      const path = pathOf('swr');
      expect((await get(`${nodes[0]}${path}`)).role).toBe('owner');
      await sleep(1700); // past max-age=1 and the stored copy's grace
      let release!: () => void;
      state.hold = new Promise<void>((resolve) => (release = resolve));
      const first = get(`${nodes[1]}${path}`); // finds it stale: it refreshes it, and waits for its handler
      while (runs(path) < 2) await sleep(5); // the refresh's handler is running
      // Nobody waits for it: a request that did would get its response (#2).
      const herd = await Promise.all(Array.from({ length: 20 }, (_, i) => get(`${nodes[i % 2]}${path}`)));
      for (const answer of herd) expect(answer).toMatchObject({ status: 200, body: `${path} #1`, role: 'stale' });
      for (const answer of herd) expect(Number(answer.age)).toBeGreaterThanOrEqual(1);
      release();
      state.hold = undefined;
      expect(await first).toMatchObject({ status: 200, body: `${path} #2`, role: 'owner' });
      expect(runs(path)).toBe(2);
      // The refresher's client is answered before its response is stored: stale answers (no run) until it is.
      await vi.waitFor(async () => expect((await get(`${nodes[0]}${path}`)).body).toBe(`${path} #2`), WAIT_FOR_EFFECT);
      const after = await Promise.all(nodes.map((node) => get(`${node}${path}`)));
      for (const answer of after) expect(answer.body).toBe(`${path} #2`);
      expect(after.map((answer) => answer.role)).not.toContain('stale');
      expect(runs(path)).toBe(2);
    });

    it('stale-if-error: a refresh answered 500 is replaced by the stale response for the requests that waited for it', async () => {
      const { nodes, runs, state } = await twoNodes(true);
      const path = pathOf('sie');
      expect((await get(`${nodes[0]}${path}`)).body).toBe(`${path} #1`);
      await sleep(1700);
      state.failing = true;
      const answers = await Promise.all(Array.from({ length: 6 }, async (_, i) => (await sleep(i * 20), get(`${nodes[i % 2]}${path}`))));
      // The refreshing request gets its own handler's 500; every other one the stale response.
      expect(answers.filter((answer) => answer.status === 500)).toHaveLength(1);
      for (const answer of answers.filter((a) => a.status !== 500))
        expect(answer).toMatchObject({ status: 200, body: `${path} #1`, role: 'stale' });
      expect(runs(path)).toBe(2);
      // The failure is kept for the retry interval: later requests get the stale response without a run.
      const later = await get(`${nodes[1]}${path}`);
      expect(later).toMatchObject({ status: 200, body: `${path} #1`, role: 'stale' });
      expect(runs(path)).toBe(2);
    });

    it('never serves stale without serveStale, under must-revalidate, or for a private response', async () => {
      const off = await twoNodes(false, 10);
      const swr = pathOf('swr');
      expect((await get(`${off.nodes[0]}${swr}`)).role).toBe('owner');
      await sleep(1700);
      // Not fresh any more (max-age=1): run again, never replayed as if stale-while-revalidate made it fresh.
      expect(await get(`${off.nodes[1]}${swr}`)).toMatchObject({ body: `${swr} #2`, role: 'owner' });

      const on = await twoNodes(true, 10);
      const paths = [pathOf('swr-must-revalidate'), pathOf('swr-private')];
      for (const path of paths) expect((await get(`${on.nodes[0]}${path}`)).body).toBe(`${path} #1`);
      await sleep(1700);
      for (const path of paths) {
        const again = await get(`${on.nodes[1]}${path}`);
        expect({ path, role: again.role, body: again.body }).toEqual({
          path,
          role: expect.stringMatching(/^(owner|bypass)$/),
          body: `${path} #2`,
        });
      }
    });

    it('refuses serveStale on a single-flight that cannot serve stale values', async () => {
      const withoutCopies = createSingleFlight({
        mode: 'distributed',
        coordinator: { ...createMemoryCoordinator(), keepsStaleCopies: false },
      });
      expect(withoutCopies.servesStale).toBe(false);
      expect(() => driver.create({ singleFlight: withoutCopies, stage: 's', serveStale: true })).toThrow(FlightConfigurationError);
      expect(() => driver.create({ singleFlight: withoutCopies, stage: 's', serveStale: 'yes' as never })).toThrow(/serveStale/);
      // Local mode serves stale values per node.
      expect(() => driver.create({ singleFlight: createSingleFlight({ mode: 'local' }), stage: 's', serveStale: true })).not.toThrow();
    });
  });
}
