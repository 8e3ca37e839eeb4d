import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts', adapter: 'src/adapter.ts', testing: 'src/testing/index.ts' },
  // One copy of each module for every entry, in CommonJS too: an error made by the adapter entry is an
  // instance of the class the main entry exports.
  splitting: true,
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node20',
  // import.meta.url in the CommonJS build (the OpenTelemetry API is resolved from this package's location).
  shims: true,
  external: ['vitest', 'fast-check'],
});
