import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: ['packages/*', 'apps/*', 'bench', 'tooling/scripts'],
    // The suites mostly wait (on Redis, child processes and timers), not compute: vitest's default of one
    // worker per core less one leaves a 2-core machine running the files one by one. `FLIGHT_TEST_WORKERS`
    // sets another number.
    maxWorkers: Number(process.env.FLIGHT_TEST_WORKERS) || Math.max(3, availableParallelism()),
  },
});
