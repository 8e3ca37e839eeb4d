import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts', redis: 'src/redis.ts', ioredis: 'src/ioredis.ts', generic: 'src/generic.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node20',
});
