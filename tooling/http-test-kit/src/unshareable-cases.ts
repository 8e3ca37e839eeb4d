/**
 * The middleware suite's unshareable cases: a run whose response may not be shared (`private`) is not
 * handed to anybody else, its joined callers run the handler themselves at once (not one after another),
 * and the burst after it does not wait behind a new run to learn the same (`holdUnshareableMs`,
 * Varnish's hit-for-pass). Two nodes over the shared Redis, behind one public `Host`; the figures are
 * printed (`[unshareable] …`).
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { Driver, Reply } from './middleware-suite.js';
import { publicGet as get, type PublicAnswer as Answer } from './public-get.js';
import { startTwoNodes } from './two-nodes.js';

const HANDLER_MS = 300;

export function registerUnshareableCases(driver: Driver): void {
  describe('unshareable responses on two nodes over Redis: nobody queues', () => {
    const closing: Array<() => Promise<void>> = [];
    afterEach(async () => {
      for (const close of closing.splice(0).reverse()) await close();
    });

    /** Two nodes whose route answers `private` after HANDLER_MS; each run answers its own number. */
    async function twoNodes(holdUnshareableMs?: number) {
      let runs = 0;
      const nodes = await startTwoNodes(driver, closing, {
        prefix: `t:unshareable:${randomBytes(4).toString('hex')}:`,
        stage: 'unshareable',
        options: holdUnshareableMs === undefined ? {} : { holdUnshareableMs },
        defaults: { l1: { enabled: false } },
        handler: async (): Promise<Reply> => {
          const n = ++runs;
          await sleep(HANDLER_MS);
          return { kind: 'text', headers: { 'content-type': 'text/plain', 'cache-control': 'private, max-age=60' }, body: `mine #${n}` };
        },
      });
      return { nodes, runs: () => runs };
    }

    async function burst(nodes: string[], path: string): Promise<Answer[]> {
      return Promise.all(Array.from({ length: 8 }, (_, i) => get(`${nodes[i % 2]}${path}`)));
    }

    it('a private response: its joined callers run their own handler at once, and the next burst does not wait behind a run', async () => {
      const figures: Record<string, number> = {};
      for (const hold of [undefined, 0] as const) {
        const { nodes, runs } = await twoNodes(hold);
        const path = `/r/private/${randomBytes(3).toString('hex')}`;
        const first = await burst(nodes, path);
        expect(runs()).toBe(8);
        // Each caller got a response of its own handler, never another's.
        expect(new Set(first.map((a) => a.body)).size).toBe(8);
        const firstMax = Math.max(...first.map((a) => a.tookMs));
        // The callers that joined the owner's run, on both nodes, learn it is unshareable together and run at
        // once: two handler latencies, never one more per node (the other node taking the run over).
        expect(firstMax).toBeLessThan(2.6 * HANDLER_MS);
        await sleep(50);
        const second = await burst(nodes, path);
        expect(runs()).toBe(16);
        expect(new Set(second.map((a) => a.body)).size).toBe(8);
        const secondMax = Math.max(...second.map((a) => a.tookMs));
        if (hold === undefined) {
          // Held (the default, 1 s): each request runs its handler at once.
          expect(secondMax).toBeLessThan(1.6 * HANDLER_MS);
          expect(second.every((a) => a.role === 'bypass')).toBe(true);
          figures.heldSecondBurstMaxMs = secondMax;
          figures.firstBurstMaxMs = firstMax;
        } else {
          // Not held: the next burst waits behind one more run first.
          expect(secondMax).toBeGreaterThanOrEqual(2 * HANDLER_MS - 20);
          figures.unheldSecondBurstMaxMs = secondMax;
        }
      }
      console.log(`[unshareable] ${JSON.stringify({ name: 'private-burst', handlerMs: HANDLER_MS, callers: 8, ...figures })}`);
    });
  });
}
