#!/usr/bin/env node
// A valkey-server >= 8.1 for the tests and the benchmark (they need `SET key value IFEQ match`, which
// Redis 7 lacks). Uses nothing but Node built-ins. Looks, in order, at FLIGHT_VALKEY_SERVER, at a
// `valkey-server` on PATH, at a build cached in node_modules/.cache/flight-valkey/; else it downloads
// the pinned Debian source tarball, checks its sha256, builds it (once, ~3 min) and caches the binary.
// `node tooling/scripts/valkey.mjs` prints the binary's path.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { aptInstall, has } from './system.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const VERSION = '8.1.1';
const TARBALL_URL = `http://deb.debian.org/debian/pool/main/v/valkey/valkey_${VERSION}+dfsg1.orig.tar.xz`;
const TARBALL_SHA256 = 'd9bbd82eecb82f359e649a0007ad3dc1b47cc15afa626348ca86b73c4ae2c7ee';
const MIN = [8, 1];

/** Where a built valkey-server is cached (node_modules is git-ignored). */
export const cacheDir = join(root, 'node_modules', '.cache', 'flight-valkey', VERSION);
export const cachedBinary = join(cacheDir, 'valkey-server');

/** Why no valkey-server could be had: ensureValkeyServer prints it and exits non-zero. */
class Failure extends Error {}
const fail = (line) => {
  throw new Failure(line);
};

/** The version `bin --version` reports when it is a Valkey server, else undefined (missing, not runnable, not Valkey). */
function valkeyVersion(bin) {
  const result = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 10_000 });
  if (result.status !== 0) return undefined;
  const match = /Valkey server v=(\d+)\.(\d+)\.(\d+)/.exec(result.stdout);
  return match ? match.slice(1).map(Number) : undefined;
}

const recentEnough = (version) => version !== undefined && (version[0] > MIN[0] || (version[0] === MIN[0] && version[1] >= MIN[1]));

/** The absolute path of `bin` on PATH, or undefined. */
function onPath(bin) {
  const result = spawnSync('sh', ['-c', `command -v ${bin}`], { encoding: 'utf8' });
  const path = result.status === 0 ? result.stdout.trim() : '';
  return path.startsWith('/') ? path : undefined;
}

/** make, a C compiler and xz, installed with apt-get when missing and allowed. */
function ensureBuildTools() {
  if (!has('make') || !has('cc')) aptInstall('a C toolchain (make, cc)', 'build-essential');
  if (!has('xz')) aptInstall('xz', 'xz-utils');
  const missing = ['make', 'cc', 'xz', 'tar'].filter((bin) => !has(bin));
  if (missing.length > 0) {
    fail(
      `building valkey-server needs ${missing.join(', ')}: install them (Debian: apt-get install build-essential xz-utils), ` +
        'or point FLIGHT_VALKEY_SERVER at a valkey-server >= 8.1',
    );
  }
}

async function download(file) {
  let body;
  try {
    const response = await fetch(TARBALL_URL);
    if (!response.ok) throw new Error(`HTTP ${response.status} ${response.statusText}`);
    body = Buffer.from(await response.arrayBuffer());
  } catch (error) {
    fail(`could not download ${TARBALL_URL}: ${error.message} (or set FLIGHT_VALKEY_SERVER to a valkey-server >= 8.1)`);
  }
  const sha256 = createHash('sha256').update(body).digest('hex');
  if (sha256 !== TARBALL_SHA256) {
    fail(`${TARBALL_URL} has sha256 ${sha256}, expected ${TARBALL_SHA256}: refusing to build it`);
  }
  writeFileSync(file, body);
}

/** Downloads, checks, unpacks and builds the pinned source in a temp dir of its own, then moves the binary into the cache. */
async function build() {
  ensureBuildTools();
  console.log(`[flight] building valkey-server ${VERSION} from the Debian source (once, ~3 min)`);
  // A unique build dir, and a rename into the cache at the end: two concurrent builds never clash
  // (both finishing is fine, the second rename replaces the first's identical binary atomically).
  const work = mkdtempSync(join(tmpdir(), 'flight-valkey-'));
  try {
    const tarball = join(work, 'valkey.orig.tar.xz');
    await download(tarball);
    const untar = spawnSync('tar', ['xJf', tarball, '-C', work], { stdio: 'inherit' });
    if (untar.status !== 0) fail(`could not unpack ${tarball} (tar exited ${untar.status})`);
    const source = join(work, `valkey-${VERSION}`);
    const log = join(work, 'build.log');
    const fd = openSync(log, 'w');
    const make = spawnSync('make', [`-j${availableParallelism()}`, 'BUILD_TLS=no', 'MALLOC=libc'], {
      cwd: source,
      stdio: ['ignore', fd, fd],
    });
    closeSync(fd);
    const binary = join(source, 'src', 'valkey-server');
    if (make.status !== 0 || !recentEnough(valkeyVersion(binary))) {
      mkdirSync(cacheDir, { recursive: true });
      const kept = join(cacheDir, 'build-failed.log');
      copyFileSync(log, kept);
      const tail = readFileSync(log, 'utf8').split('\n').slice(-40).join('\n');
      console.error(tail);
      fail(`building valkey-server ${VERSION} failed (make exited ${make.status ?? make.signal}); full log: ${kept}`);
    }
    mkdirSync(cacheDir, { recursive: true });
    const temp = `${cachedBinary}.${process.pid}.${Date.now()}.tmp`;
    copyFileSync(binary, temp);
    renameSync(temp, cachedBinary);
    rmSync(join(cacheDir, 'build-failed.log'), { force: true });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The absolute path of a valkey-server >= 8.1: FLIGHT_VALKEY_SERVER when it exists and runs, else
 * `valkey-server` on PATH when recent enough, else the cached build, else a fresh build into the cache.
 * Exits the process (non-zero, with the reason) when none can be had.
 */
export async function ensureValkeyServer() {
  const fromEnv = process.env.FLIGHT_VALKEY_SERVER;
  if (fromEnv) {
    const path = resolve(fromEnv);
    const version = existsSync(path) ? valkeyVersion(path) : undefined;
    if (recentEnough(version)) return path;
    console.warn(
      `[flight] FLIGHT_VALKEY_SERVER=${fromEnv} is ${version ? `Valkey ${version.join('.')}, older than 8.1` : 'not a runnable valkey-server'}: ignoring it`,
    );
  }
  const system = onPath('valkey-server');
  if (system && recentEnough(valkeyVersion(system))) return system;
  if (existsSync(cachedBinary) && recentEnough(valkeyVersion(cachedBinary))) return cachedBinary;
  try {
    await build();
  } catch (error) {
    if (!(error instanceof Failure)) throw error;
    console.error(`[flight] ${error.message}`);
    process.exit(1);
  }
  return cachedBinary;
}

const invokedAsCli = process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedAsCli) console.log(await ensureValkeyServer());
