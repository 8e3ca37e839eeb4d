/**
 * The middleware suite's freshness cases (RFC 9111, shared cache): callers that join a run share its
 * response whatever its Cache-Control, while what is replayed after the run follows the response's
 * freshness and carries `Age`. Two nodes (servers with their own single-flight and coordinator) over the
 * shared Redis, behind one public `Host`.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { Driver, Reply } from './middleware-suite.js';
import { countedEvents } from './counted-events.js';
import { publicGet as get } from './public-get.js';
import { requestedPath, startTwoNodes } from './two-nodes.js';

/** What a route answers: `Cache-Control` (and other headers) by its path `/r/<case>/...`. */
const CASES: Record<string, Record<string, string>> = {
  'no-cache': { 'cache-control': 'no-cache' },
  'max-age-0': { 'cache-control': 'max-age=0' },
  's-maxage-0': { 'cache-control': 'public, max-age=60, s-maxage=0' },
  'must-revalidate': { 'cache-control': 'max-age=1, must-revalidate' },
  expired: { expires: 'Thu, 01 Jan 1970 00:00:00 GMT' },
  'aged-out': { 'cache-control': 'max-age=60', age: '70' },
  'max-age-60': { 'cache-control': 'max-age=60' },
  's-maxage-60': { 'cache-control': 'max-age=0, s-maxage=60' },
  aged: { 'cache-control': 'max-age=60', age: '30' },
  none: {},
};

export function registerFreshnessCases(driver: Driver): void {
  describe('freshness of replays (RFC 9111, shared cache) on two nodes over Redis', () => {
    const closing: Array<() => Promise<void>> = [];
    afterEach(async () => {
      for (const close of closing.splice(0).reverse()) await close();
    });

    /**
     * Two nodes serving the cases; each run of a path answers `<path> #<n>`, n counting its runs.
     * `joinedBy(n)`: the runs that start from now on wait (at most 5 s) until the nodes have seen `n` more
     * follower waits, so a request sent to the other node joins the run however slow the machine.
     */
    async function twoNodes(delayMs = 0) {
      const runs = new Map<string, number>();
      const followers = countedEvents();
      let awaited = 0;
      const nodes = await startTwoNodes(driver, closing, {
        prefix: `t:freshness:${randomBytes(4).toString('hex')}:`,
        stage: 'fresh',
        defaults: { l1: { enabled: true } },
        onFollower: () => followers.add(),
        handler: async (req): Promise<Reply> => {
          const path = requestedPath(req.path);
          const n = (runs.get(path) ?? 0) + 1;
          runs.set(path, n);
          await followers.reach(awaited, 5000);
          if (delayMs) await sleep(delayMs);
          const name = path.split('/')[2]!;
          return { kind: 'text', headers: { 'content-type': 'text/plain', ...CASES[name] }, body: `${path} #${n}` };
        },
      });
      const joinedBy = (n: number) => void (awaited = followers.count + n);
      return { nodes, runs: (path: string) => runs.get(path) ?? 0, joinedBy };
    }

    const stale = ['no-cache', 'max-age-0', 's-maxage-0', 'must-revalidate', 'expired', 'aged-out'];

    it('never replays, on either node, a response that is no longer fresh: the next request runs the handler', async () => {
      const { nodes, runs, joinedBy } = await twoNodes(100);
      const paths = stale.map((name) => `/r/${name}/${randomBytes(3).toString('hex')}`);
      for (const path of paths) expect((await get(`${nodes[0]}${path}`)).role).toBe('owner');
      await sleep(1200);
      for (const path of paths) {
        joinedBy(1);
        const again = await Promise.all(nodes.map((node) => get(`${node}${path}`)));
        expect({ path, roles: again.map((answer) => answer.role).sort() }).toEqual({ path, roles: ['follower', 'owner'] });
        expect(again.map((answer) => answer.body)).toEqual([`${path} #2`, `${path} #2`]);
        expect(runs(path)).toBe(2);
      }
    });

    it('callers arriving right after a run of a stale response wait for its copy to go and share the next run (one per cluster)', async () => {
      const { nodes, runs } = await twoNodes(100);
      const path = `/r/no-cache/${randomBytes(3).toString('hex')}`;
      expect((await get(`${nodes[0]}${path}`)).body).toBe(`${path} #1`);
      // The owner's client is answered before the run's bookkeeping ends: a request sent at once may still join it.
      await sleep(50);
      const after = await Promise.all(Array.from({ length: 10 }, (_, i) => get(`${nodes[i % 2]}${path}`)));
      expect(runs(path)).toBe(2);
      for (const answer of after)
        expect({ body: answer.body, stored: answer.role === 'replay' || answer.role === 'l1' }).toEqual({
          body: `${path} #2`,
          stored: false,
        });
    });

    it('shares one run of a stale response with every caller that joined it, on both nodes', async () => {
      const { nodes, runs } = await twoNodes(300);
      const path = `/r/no-cache/${randomBytes(3).toString('hex')}`;
      const answers = await Promise.all(Array.from({ length: 8 }, async (_, i) => (await sleep(i * 10), get(`${nodes[i % 2]}${path}`))));
      expect(runs(path)).toBe(1);
      expect(answers.map((answer) => answer.body)).toEqual(Array<string>(8).fill(`${path} #1`));
      expect(answers.filter((answer) => answer.role === 'follower')).toHaveLength(7);
    });

    it('replays a fresh response (s-maxage over max-age; none stated: the stage time) with its Age', async () => {
      const { nodes, runs } = await twoNodes();
      const fresh = { 'max-age-60': 0, 's-maxage-60': 0, aged: 30, none: 0 };
      const paths = Object.keys(fresh).map((name) => `/r/${name}/${randomBytes(3).toString('hex')}`);
      for (const path of paths) expect((await get(`${nodes[0]}${path}`)).role).toBe('owner');
      await sleep(1100);
      for (const [i, initial] of Object.values(fresh).entries()) {
        const path = paths[i]!;
        const [l1, replay] = await Promise.all(nodes.map((node) => get(`${node}${path}`)));
        // The owner's node fills L1 from its next read (Redis coordinators), so both nodes may answer from Redis.
        expect({ path, roles: [l1!.role, replay!.role], bodies: [l1!.body, replay!.body] }).toEqual({
          path,
          roles: [expect.stringMatching(/^(l1|replay)$/), 'replay'],
          bodies: [`${path} #1`, `${path} #1`],
        });
        for (const answer of [l1!, replay!]) expect(Number(answer.age)).toBe(initial + 1);
        expect(runs(path)).toBe(1);
      }
    });
  });
}
