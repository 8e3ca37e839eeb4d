#!/usr/bin/env node
// The cross-feature oracle, longer than CI runs it: `pnpm oracle [--seconds 120] [--seeds 3] [--seed N]`.
// Each seed runs the named cases and one random schedule of `--seconds` on both Redis adapters
// (packages/redis-*/test/oracle.test.ts); a failing seed is printed with the command that replays it.
import { spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { values } = parseArgs({
  options: { seconds: { type: 'string', default: '120' }, seeds: { type: 'string', default: '1' }, seed: { type: 'string' } },
});
const seconds = Number(values.seconds);
const count = Number(values.seeds);
if (!(seconds > 0) || !(Number.isInteger(count) && count > 0)) {
  console.error('usage: pnpm oracle [--seconds <s>] [--seeds <n>] [--seed <seed>]');
  process.exit(2);
}
const seeds = values.seed ? [Number(values.seed)] : Array.from({ length: count }, () => randomInt(2 ** 31));
const failed = [];
for (const seed of seeds) {
  const run = spawnSync(
    'pnpm',
    ['exec', 'vitest', 'run', 'packages/redis-ioredis/test/oracle.test.ts', 'packages/redis-node/test/oracle.test.ts'],
    { cwd: root, stdio: 'inherit', env: { ...process.env, FLIGHT_ORACLE_SEED: String(seed), FLIGHT_ORACLE_MS: String(seconds * 1000) } },
  );
  console.log(`[oracle] seed ${seed}: ${run.status === 0 ? 'no violation' : 'FAILED'}`);
  if (run.status !== 0) failed.push(seed);
}
if (failed.length > 0) {
  console.error(`[oracle] failing seeds: ${failed.join(', ')}; replay one with: pnpm oracle --seed <seed>`);
  process.exit(1);
}
