import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts', testing: 'src/testing/index.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node20',
  // import.meta.url in the CommonJS build (the OpenTelemetry API is resolved from this package's location).
  shims: true,
  external: ['vitest', 'fast-check'],
});
