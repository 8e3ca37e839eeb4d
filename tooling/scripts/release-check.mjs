#!/usr/bin/env node
// Proves the release path on a scratch copy of the repository, the way the release workflow runs it:
//   1. `changeset version` applies the pending changesets cleanly (versions and changelogs move);
//   2. `pnpm -r publish --dry-run` packs every public package;
//   3. each packed manifest has its `workspace:` and `catalog:` ranges replaced by real versions.
// The working tree is never touched: everything happens in a temporary copy, removed at the end.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const scratch = mkdtempSync(join(tmpdir(), 'flight-release-'));
const say = (line) => console.log(`[release-check] ${line}`);
const fail = (line) => {
  console.error(`[release-check] FAILED: ${line}`);
  process.exitCode = 1;
};
const run = (cmd, args, options = {}) => {
  const result = spawnSync(cmd, args, { cwd: scratch, encoding: 'utf8', ...options });
  if (result.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${result.status}\n${result.stdout}\n${result.stderr}`);
  return `${result.stdout}\n${result.stderr}`;
};

function publicPackages(dir) {
  return readdirSync(join(dir, 'packages'))
    .map((name) => join(dir, 'packages', name))
    .filter((pkgDir) => existsSync(join(pkgDir, 'package.json')))
    .map((pkgDir) => ({ dir: pkgDir, manifest: JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) }))
    .filter((p) => !p.manifest.private);
}

try {
  // A copy of the tracked files as committed plus the working changes, with the built dist folders.
  const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard'], { cwd: root, encoding: 'utf8' }).split('\n').filter(Boolean);
  for (const file of files) if (existsSync(join(root, file))) cpSync(join(root, file), join(scratch, file), { recursive: true });
  for (const pkg of publicPackages(root)) {
    const dist = join(pkg.dir, 'dist');
    if (existsSync(dist)) cpSync(dist, join(scratch, relative(root, dist)), { recursive: true });
  }
  run('pnpm', ['install', '--frozen-lockfile', '--offline', '--ignore-scripts']);
  run('git', ['init', '-q']);
  run('git', ['-c', 'user.email=ci@localhost', '-c', 'user.name=ci', 'add', '-A']);
  run('git', ['-c', 'user.email=ci@localhost', '-c', 'user.name=ci', 'commit', '-qm', 'scratch']);

  const before = Object.fromEntries(publicPackages(scratch).map((p) => [p.manifest.name, p.manifest.version]));
  const pending = readdirSync(join(scratch, '.changeset')).filter((f) => f.endsWith('.md') && f !== 'README.md');
  run('pnpm', ['exec', 'changeset', 'version']);
  const after = publicPackages(scratch);
  const moved = after.filter((p) => p.manifest.version !== before[p.manifest.name]);
  say(
    `changeset version: ${pending.length} changesets applied; ${moved.map((p) => `${p.manifest.name} ${before[p.manifest.name]} → ${p.manifest.version}`).join(', ') || 'no version moved'}`,
  );
  if (pending.length > 0 && moved.length === 0) fail('changesets are pending but no public package version moved');
  const left = readdirSync(join(scratch, '.changeset')).filter((f) => f.endsWith('.md') && f !== 'README.md');
  if (left.length > 0) fail(`changesets left after version: ${left.join(', ')}`);

  /**
   * What a user's tools follow in a tarball: every export target and bin is a shipped file (the workspace's
   * `@flight/source` condition, which points at `src/`, is not published), and every source map either
   * ships each source it names or carries its content.
   */
  function checkShippedFiles(name, tarballPath, manifest) {
    const files = new Set(
      execFileSync('tar', ['-tzf', tarballPath], { encoding: 'utf8' })
        .split('\n')
        .filter(Boolean)
        .map((f) => f.replace(/^package\//, '')),
    );
    const targets = [];
    const walk = (value) => {
      if (typeof value === 'string') targets.push(value);
      else if (value && typeof value === 'object')
        for (const [key, inner] of Object.entries(value)) {
          if (key === '@flight/source') fail(`${name}: the packed exports keep the @flight/source condition`);
          walk(inner);
        }
    };
    walk(manifest.exports);
    walk(manifest.bin);
    for (const target of targets) if (!files.has(target.replace(/^\.\//, ''))) fail(`${name}: ${target} is exported but not shipped`);
    let maps = 0;
    for (const file of files) {
      if (!file.endsWith('.map')) continue;
      maps++;
      const map = JSON.parse(execFileSync('tar', ['-xOzf', tarballPath, `package/${file}`], { encoding: 'utf8' }));
      map.sources.forEach((source, i) => {
        const shippedSource = join(dirname(file), source).replace(/\\/g, '/');
        if (!files.has(shippedSource) && typeof map.sourcesContent?.[i] !== 'string')
          fail(`${name}: ${file} names ${source}, neither shipped nor inlined`);
      });
    }
    return `${targets.length} export targets shipped, ${maps} source maps resolve`;
  }

  const dry = run('pnpm', ['-r', 'publish', '--dry-run', '--no-git-checks', '--access', 'public'], {
    env: { ...process.env, npm_config_loglevel: 'notice' },
  });
  for (const pkg of after) {
    const { name, version } = pkg.manifest;
    const packDir = mkdtempSync(join(scratch, 'pack-'));
    run('pnpm', ['pack', '--pack-destination', packDir], { cwd: pkg.dir });
    const tarball = readdirSync(packDir).find((f) => f.endsWith('.tgz'));
    if (!tarball) {
      fail(`${name}: pnpm pack produced no tarball`);
      continue;
    }
    const manifest = JSON.parse(execFileSync('tar', ['-xOzf', join(packDir, tarball), 'package/package.json'], { encoding: 'utf8' }));
    const ranges = ['dependencies', 'peerDependencies', 'optionalDependencies'].flatMap((field) => Object.entries(manifest[field] ?? {}));
    const unresolved = ranges.filter(([, range]) => /^(workspace|catalog):/.test(range));
    if (unresolved.length > 0) fail(`${name}: packed manifest keeps ${unresolved.map(([n, r]) => `${n}@${r}`).join(', ')}`);
    if (manifest.version !== version) fail(`${name}: packed version ${manifest.version}, expected ${version}`);
    if (!dry.includes(`${name}@${version}`)) fail(`${name}@${version}: not in the output of pnpm -r publish --dry-run`);
    const internal = ranges.filter(([n]) => n === '@flight/redis-scripts' || n === '@flight/http-shared');
    if (internal.length > 0) fail(`${name}: depends on an unpublished workspace package (${internal.map(([n]) => n).join(', ')})`);
    const shipped = checkShippedFiles(name, join(packDir, tarball), manifest);
    say(
      `${name}@${version}: packed, ${ranges.length} dependency ranges all resolved (${ranges.map(([n, r]) => `${n} ${r}`).join('; ') || 'none'}); ${shipped}`,
    );
  }
  if (!process.exitCode) say('release path OK');
} catch (error) {
  fail(error instanceof Error ? error.message : String(error));
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
