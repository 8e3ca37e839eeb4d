#!/usr/bin/env node
/**
 * `pnpm bench`: builds the @flight packages (turbo: cached, seconds when nothing changed) and runs the
 * bench on them — what users install — unless `FLIGHT_BENCH_LIBRARY=source` asks for the TypeScript
 * sources (no build). Arguments go to src/main.ts.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const source = process.env.FLIGHT_BENCH_LIBRARY === 'source';
const run = (command, args, options = {}) => {
  const result = spawnSync(command, args, { stdio: 'inherit', ...options });
  if (result.error) throw result.error;
  if (result.status !== 0) process.exit(result.status ?? 1);
};
if (!source) {
  console.log('[bench] building the @flight packages (FLIGHT_BENCH_LIBRARY=source runs the sources instead)');
  run('pnpm', ['exec', 'turbo', 'run', 'build', '--filter=@flight/bench^...', '--output-logs=errors-only'], { cwd: join(here, '..') });
}
const args = process.argv.slice(2);
run(process.execPath, [...(source ? ['--conditions=@flight/source'] : []), '--import', 'tsx', join(here, 'src/main.ts'), ...args], {
  env: { ...process.env, FLIGHT_BENCH_LIBRARY: source ? 'source' : 'built' },
  cwd: here,
});
