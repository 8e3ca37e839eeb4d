import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts', fastify: 'src/fastify.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node20',
  // `import.meta.url` finds the page beside the build in the CommonJS build too.
  shims: true,
});
