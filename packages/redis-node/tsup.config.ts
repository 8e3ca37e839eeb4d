import { defineConfig, type Options } from 'tsup';

const library: Options = {
  entry: { index: 'src/index.ts' },
  format: ['esm', 'cjs'],
  // The private @flight/redis-scripts is bundled, so its types are inlined into the .d.ts too
  // (its relative imports are extensionless so this resolver finds them).
  dts: { resolve: [/^@flight\/redis-scripts$/, /^\.{1,2}\//] },
  // dist is emptied by the build script before both builds run (in parallel).
  clean: false,
  sourcemap: true,
  target: 'node20',
  // Internal workspace packages are bundled in; everything else stays external.
  noExternal: [/^@flight\/(redis-scripts|http-shared)$/],
};

export default defineConfig([
  library,
  // The `flight` command: ESM only (it awaits at top level), one file with everything but the client library.
  {
    entry: { cli: 'src/cli.ts' },
    format: ['esm'],
    banner: { js: '#!/usr/bin/env node' },
    clean: false,
    sourcemap: true,
    target: 'node20',
    noExternal: library.noExternal,
  },
]);
