/**
 * The common path is quiet and cheap: an owner run that completes, a follower and a replay log nothing at
 * warn or error level, whether or not anyone listens to the lifecycle events (payloads are built only for
 * listeners, and skipping one must not take another branch).
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryCoordinator, createSingleFlight, type SingleFlight } from '@flight/core';
import { type FlightLogger } from '@flight/core/adapter';
import { setTimeout as sleep } from 'node:timers/promises';

const created: SingleFlight[] = [];
afterEach(async () => {
  await Promise.all(created.splice(0).map((sf) => sf.close()));
});

function recordingLogger() {
  const lines: string[] = [];
  const logger: FlightLogger = {
    debug() {},
    info() {},
    warn: (_fields, message) => lines.push(`warn ${message}`),
    error: (_fields, message) => lines.push(`error ${message}`),
  };
  return { logger, lines };
}

describe('quiet common path', () => {
  for (const listening of [false, true]) {
    it(`owner, follower and replay log no warning (${listening ? 'with' : 'without'} event listeners)`, async () => {
      const coordinator = createMemoryCoordinator();
      const { logger, lines } = recordingLogger();
      const make = (nodeId: string) => {
        const sf = createSingleFlight({
          coordinator,
          nodeId,
          logger,
          mode: 'distributed',
          defaults: { l1: { enabled: false }, pollIntervalMs: 20 },
        });
        created.push(sf);
        return sf;
      };
      const [a, b] = [make('a'), make('b')];
      const completed: number[] = [];
      if (listening) a.on('completed', (event) => completed.push(event.epoch));
      const key = randomUUID();
      const owner = a.execute('eval', key, async () => {
        await sleep(30);
        return { score: 1 };
      });
      await sleep(5);
      const follower = await b.execute('eval', key, async () => ({ score: 2 }));
      const replay = await b.execute('eval', key, async () => ({ score: 3 }));
      expect((await owner).role).toBe('owner');
      expect([follower.role, follower.value]).toEqual(['follower', { score: 1 }]);
      expect([replay.role, replay.value]).toEqual(['replay', { score: 1 }]);
      expect(completed).toEqual(listening ? [(await owner).epoch] : []);
      expect(lines).toEqual([]);
    });
  }
});
