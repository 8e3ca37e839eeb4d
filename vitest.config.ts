import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * @flight/ai-sdk needs Node >= 22 (so does the AI SDK 7 it wraps): on an older Node, `npm test` runs its
 * project on Node 22 from the npm registry after this run (tooling/scripts/flight.mjs).
 */
const olderThan22 = Number(process.versions.node.split('.')[0]) < 22;

export default defineConfig({
  test: {
    projects: ['packages/*', ...(olderThan22 ? ['!packages/ai-sdk'] : []), 'apps/*', 'bench', 'tooling/scripts'],
    // The suites mostly wait (on Redis, child processes and timers), not compute: vitest's default of one
    // worker per core less one leaves a 2-core machine running the files one by one. `FLIGHT_TEST_WORKERS`
    // sets another number.
    maxWorkers: Number(process.env.FLIGHT_TEST_WORKERS) || Math.max(3, availableParallelism()),
  },
});
