/**
 * The middleware suite's unshareable cases: a run whose response may not be shared (`private`) is not
 * handed to anybody else, its joined callers run the handler themselves at once (not one after another),
 * and the burst after it does not wait behind a new run to learn the same (`holdUnshareableMs`,
 * Varnish's hit-for-pass). Two nodes over the shared Redis, behind one public `Host`; "at once" is a
 * barrier the runs must all reach together, not a time; the figures are printed (`[unshareable] …`).
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

    /**
     * Two nodes whose route answers `private`; each run answers its own number and is logged (`start n`,
     * `end n`). `together(n)`: the n-th run waits at a barrier until that many runs of its burst (of 8) are
     * running at once, so a caller that queued behind another would never arrive; 0: it takes HANDLER_MS
     * (time for the burst's other callers to join it).
     */
    async function twoNodes(holdUnshareableMs: number, together: (n: number) => number = () => 0) {
      let runs = 0;
      const log: string[] = [];
      const barriers = new Map<number, { count: number; open: () => void; opened: Promise<void> }>();
      const barrier = (burst: number) => {
        let found = barriers.get(burst);
        if (!found) {
          let open!: () => void;
          const opened = new Promise<void>((resolve) => (open = resolve));
          barriers.set(burst, (found = { count: 0, open, opened }));
        }
        return found;
      };
      const nodes = await startTwoNodes(driver, closing, {
        prefix: `t:unshareable:${randomBytes(4).toString('hex')}:`,
        stage: 'unshareable',
        options: { holdUnshareableMs },
        defaults: { l1: { enabled: false } },
        handler: async (): Promise<Reply> => {
          const n = ++runs;
          log.push(`start ${n}`);
          const size = together(n);
          if (size > 0) {
            const gate = barrier(Math.ceil(n / 8));
            if (++gate.count === size) gate.open();
            await gate.opened;
          } else await sleep(HANDLER_MS);
          log.push(`end ${n}`);
          return { kind: 'text', headers: { 'content-type': 'text/plain', 'cache-control': 'private, max-age=60' }, body: `mine #${n}` };
        },
      });
      return { nodes, runs: () => runs, log };
    }

    async function burst(nodes: string[], path: string): Promise<Answer[]> {
      return Promise.all(Array.from({ length: 8 }, (_, i) => get(`${nodes[i % 2]}${path}`)));
    }

    it('a private response: its joined callers run their own handler at once, and the next burst does not wait behind a run', async () => {
      const path = () => `/r/private/${randomBytes(3).toString('hex')}`;
      // Held (longer than the test may take): after the first run, the first burst's 7 other callers run at
      // once, all 7 together, on both nodes; the second burst's 8 callers bypass the flight, all 8 together.
      const held = await twoNodes(600_000, (n) => (n === 1 ? 0 : n <= 8 ? 7 : 8));
      const route = path();
      const first = await burst(held.nodes, route);
      expect(held.runs()).toBe(8);
      // Each caller got a response of its own handler, never another's.
      expect(new Set(first.map((a) => a.body)).size).toBe(8);
      const second = await burst(held.nodes, route);
      expect(held.runs()).toBe(16);
      expect(new Set(second.map((a) => a.body)).size).toBe(8);
      expect(second.every((a) => a.role === 'bypass')).toBe(true);
      // Not held: the second burst's callers wait behind one more run (its 9th) first, then run their own.
      const unheld = await twoNodes(0);
      const other = path();
      await burst(unheld.nodes, other);
      const third = await burst(unheld.nodes, other);
      expect(unheld.runs()).toBe(16);
      expect(new Set(third.map((a) => a.body)).size).toBe(8);
      expect(unheld.log).toContain('end 9');
      for (let n = 10; n <= 16; n++) expect(unheld.log.indexOf(`start ${n}`)).toBeGreaterThan(unheld.log.indexOf('end 9'));
      const figures = {
        firstBurstMaxMs: Math.max(...first.map((a) => a.tookMs)),
        heldSecondBurstMaxMs: Math.max(...second.map((a) => a.tookMs)),
        unheldSecondBurstMaxMs: Math.max(...third.map((a) => a.tookMs)),
      };
      console.log(`[unshareable] ${JSON.stringify({ name: 'private-burst', handlerMs: HANDLER_MS, callers: 8, ...figures })}`);
    });
  });
}
