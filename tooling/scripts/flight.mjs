#!/usr/bin/env node
// The quick-start entry point: `npm test` and `npm run demo` on a machine that has only Node and npm.
// Uses nothing but Node built-ins: it gets pnpm (npm i -g pnpm@10, or npx as a fallback), installs
// the workspace, makes sure a redis-server is available (apt-get when missing and allowed) and, for the
// tests, a valkey-server >= 8.1 (built once from the pinned Debian source, see valkey.mjs), then runs
// the real command through pnpm.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { aptInstall, has } from './system.mjs';
import { ensureValkeyServer } from './valkey.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const [command = 'test', ...rest] = process.argv.slice(2);

/** Runs `bin` and exits with its code when it fails, saying why when it could not run or was killed. */
const run = (bin, args, options = {}) => {
  const result = spawnSync(bin, args, { stdio: 'inherit', cwd: root, ...options });
  if (result.error) {
    console.error(`[flight] could not run \`${[bin, ...args].join(' ')}\`: ${result.error.message}`);
    process.exit(1);
  }
  if (result.signal) console.error(`[flight] \`${[bin, ...args].join(' ')}\` was stopped by ${result.signal}`);
  if (result.status !== 0) process.exit(result.status ?? 1);
};

function pnpm() {
  if (has('pnpm')) return ['pnpm', []];
  const install = spawnSync('npm', ['install', '-g', 'pnpm@10'], { stdio: 'inherit' });
  if (install.status === 0 && has('pnpm')) return ['pnpm', []];
  return ['npx', ['-y', 'pnpm@10']];
}

function ensureRedisServer() {
  if (has('redis-server')) return;
  aptInstall('redis-server', 'redis-server redis-tools');
  if (!has('redis-server')) {
    console.warn('[flight] no redis-server found; tests need a Redis at REDIS_URL (default redis://127.0.0.1:6379)');
  }
}

/** The dashboard's browser test drives the system Chromium through playwright-core (no browser download). */
function ensureChromium() {
  if (has('chromium') || has('chromium-browser')) return;
  aptInstall('chromium', 'chromium');
  if (!has('chromium') && !has('chromium-browser')) {
    console.warn('[flight] no chromium found; the dashboard browser test will fail: install it with `apt-get install chromium`');
  }
}

const [bin, pre] = pnpm();
const pn = (args) => run(bin, [...pre, ...args]);
if (!existsSync(join(root, 'node_modules', '.modules.yaml'))) pn(['install', '--frozen-lockfile']);

switch (command) {
  case 'test':
    ensureRedisServer();
    // The tests that need `SET ... IFEQ` start this valkey-server (tooling/test-servers/src/valkey.ts).
    process.env.FLIGHT_VALKEY_SERVER = await ensureValkeyServer();
    ensureChromium();
    pn(['exec', 'prettier', '--check', '.']);
    pn(['exec', 'turbo', 'run', 'build', 'lint']);
    pn(['exec', 'vitest', 'run', ...rest]);
    // @flight/ai-sdk needs Node >= 22 (vitest.config.ts leaves it out on an older one): run it on Node 22.
    if (Number(process.versions.node.split('.')[0]) < 22 && rest.length === 0) {
      run('npx', ['-y', '-p', 'node@22', 'node', 'node_modules/vitest/vitest.mjs', 'run', '--project', 'ai-sdk']);
    }
    break;
  case 'demo':
    pn(['--filter', '@flight/interview-demo', 'run', 'demo', ...rest]);
    break;
  default:
    console.error(`unknown command ${command}`);
    process.exit(2);
}
