import { defineConfig, type Options } from 'tsup';

const shared: Options = {
  entry: { index: 'src/index.ts', adapter: 'src/adapter.ts', testing: 'src/testing/index.ts' },
  // One copy of each module for every entry, in CommonJS too: an error made by the adapter entry is an
  // instance of the class the main entry exports.
  splitting: true,
  dts: true,
  // dist is emptied by the build script before both builds run (in parallel).
  clean: false,
  target: 'node20',
  // import.meta.url in the CommonJS build (the OpenTelemetry API is resolved from this package's location).
  shims: true,
  external: ['vitest', 'fast-check'],
};

export default defineConfig([
  { ...shared, format: ['esm'], sourcemap: true },
  // No source maps for CommonJS: its split chunks are converted from ESM after esbuild, and the maps of
  // that step name the build machine's dist files instead of the sources (the release check rejects them).
  { ...shared, format: ['cjs'], sourcemap: false },
]);
