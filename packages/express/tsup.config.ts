import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts' },
  format: ['esm', 'cjs'],
  // Inline the bundled internal package's types too: it is never published.
  dts: { resolve: [/^@flight\/http-shared(\/public)?$/] },
  clean: true,
  sourcemap: true,
  target: 'node20',
  // Internal workspace packages are bundled in; everything else stays external.
  noExternal: [/^@flight\/(redis-scripts|http-shared)(\/public)?$/],
});
