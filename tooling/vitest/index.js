// Shared vitest config: every @flight/* import resolves to the package's TypeScript source
// through the `@flight/source` export condition, so tests never need a build. Each package's
// vitest.config.ts is one call.
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The export condition every workspace package maps to its `src` entry (see the base tsconfig). */
export const SOURCE_CONDITION = '@flight/source';

/** A vitest project config for one workspace package. */
export function flightProject(name, overrides = {}) {
  return {
    // Vitest's default server conditions (Vite's without `module`), with the source condition first.
    ssr: { resolve: { conditions: [SOURCE_CONDITION, 'node', 'development|production'] } },
    test: {
      name,
      include: ['test/**/*.test.ts'],
      testTimeout: 30_000,
      hookTimeout: 60_000,
      // A Redis for every test: REDIS_URL when it answers, else a redis-server of the run's own.
      globalSetup: [join(root, 'tooling/test-servers/src/global-setup.ts')],
      ...overrides,
    },
  };
}
