import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts' },
  format: ['esm', 'cjs'],
  // The private @flight/redis-scripts is bundled, so its types are inlined into the .d.ts too
  // (its relative imports are extensionless so this resolver finds them).
  dts: { resolve: [/^@flight\/redis-scripts$/, /^\.{1,2}\//] },
  clean: true,
  sourcemap: true,
  target: 'node20',
  // Internal workspace packages are bundled in; everything else stays external.
  noExternal: [/^@flight\/(redis-scripts|http-shared)$/],
});
