#!/usr/bin/env node
// The quick-start entry point: `npm test` and `npm run demo` on a machine that has only Node and npm.
// Uses nothing but Node built-ins: it gets pnpm (npm i -g pnpm@10, or npx as a fallback), installs
// the workspace, makes sure a redis-server is available (apt-get when missing and allowed), then runs
// the real command through pnpm.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const [command = 'test', ...rest] = process.argv.slice(2);

const has = (bin) => spawnSync('sh', ['-c', `command -v ${bin}`], { stdio: 'ignore' }).status === 0;
const run = (bin, args, options = {}) => {
  const result = spawnSync(bin, args, { stdio: 'inherit', cwd: root, ...options });
  if (result.status !== 0) process.exit(result.status ?? 1);
};

function pnpm() {
  if (has('pnpm')) return ['pnpm', []];
  const install = spawnSync('npm', ['install', '-g', 'pnpm@10'], { stdio: 'inherit' });
  if (install.status === 0 && has('pnpm')) return ['pnpm', []];
  return ['npx', ['-y', 'pnpm@10']];
}

/** Installs Debian packages with apt-get when we may (root, or passwordless sudo). */
function aptInstall(what, packages) {
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  const sudo = root ? [] : has('sudo') ? ['sudo', '-n'] : null;
  if (!sudo || !has('apt-get')) return;
  console.log(`[flight] ${what} is missing: installing it with apt-get`);
  const prefix = sudo.join(' ');
  spawnSync('sh', ['-c', `${prefix} apt-get update -qq && DEBIAN_FRONTEND=noninteractive ${prefix} apt-get install -y -qq ${packages}`], {
    stdio: 'inherit',
  });
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
    ensureChromium();
    pn(['exec', 'prettier', '--check', '.']);
    pn(['exec', 'turbo', 'run', 'build', 'lint']);
    pn(['exec', 'vitest', 'run', ...rest]);
    break;
  case 'demo':
    pn(['--filter', '@flight/interview-demo', 'run', 'demo', ...rest]);
    break;
  default:
    console.error(`unknown command ${command}`);
    process.exit(2);
}
