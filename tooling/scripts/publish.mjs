#!/usr/bin/env node
// The one way @flight packages reach npm: the release workflow (dist-tag `latest`), the canary job
// (`canary`), the one-time first publish from a maintainer's machine, and the release check's dry run.
//
// Each public package of packages/ whose version is not on npm yet is packed with pnpm (which turns the
// `workspace:` and `catalog:` ranges into real versions and applies publishConfig) and the tarball is
// published with the npm CLI, which authenticates by npm trusted publishing (OIDC) inside GitHub Actions
// and signs provenance there. @flight/core goes first, so no package is ever on npm before what it needs.
//
//   node tooling/scripts/publish.mjs --tag latest|canary [--dry-run] [--pack-dir DIR] [--no-provenance]
//   node tooling/scripts/publish.mjs --trust-commands    (prints the `npm trust github` line of each package)
//
// Before anything is published, a pre-flight (release/trust.mjs) names every package the workflow could not
// publish (no trusted-publisher entry; inside GitHub Actions, not on npm yet) and publishes nothing then.
// With `--tag latest` every published package gets a git tag `<name>@<version>` and a `New tag:` line,
// from which the changesets action makes the GitHub releases. Exit code 1 when any publish failed.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { publicPackages } from './release/packages.mjs';
import { preflight, trustCommand } from './release/trust.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const DIST_TAGS = ['latest', 'canary', 'next'];

const { values } = parseArgs({
  options: {
    tag: { type: 'string' },
    'dry-run': { type: 'boolean', default: false },
    'pack-dir': { type: 'string' },
    'no-provenance': { type: 'boolean', default: false },
    root: { type: 'string' },
    'trust-commands': { type: 'boolean', default: false },
  },
  strict: true,
});
if (values['trust-commands']) {
  for (const { manifest } of publicPackages(values.root ? resolve(values.root) : root)) console.log(trustCommand(manifest.name));
  process.exit(0);
}
if (!values.tag || !DIST_TAGS.includes(values.tag)) {
  console.error(`[publish] --tag must be one of ${DIST_TAGS.join(', ')}`);
  process.exit(2);
}
const workspace = values.root ? resolve(values.root) : root;
const tag = values.tag;
const dryRun = values['dry-run'];
// Provenance needs the CI's identity token (GitHub Actions with `id-token: write`); elsewhere npm refuses it.
const provenance = !values['no-provenance'] && Boolean(process.env.ACTIONS_ID_TOKEN_REQUEST_URL);
const say = (line) => console.log(`[publish] ${line}`);

/** Whether `name@version` is on the registry already (a 404 says it is not; any other failure stops the release). */
function published(name, version) {
  const result = spawnSync('npm', ['view', `${name}@${version}`, 'version', '--json'], { encoding: 'utf8' });
  if (result.status === 0) return result.stdout.trim().length > 0;
  if (/E404|404 Not Found/.test(result.stderr)) return false;
  throw new Error(`npm view ${name}@${version} failed: ${result.stderr.trim()}`);
}

/** Whether `name` is on the registry at all (a 404 says it is not; any other failure stops the release). */
function exists(name) {
  const result = spawnSync('npm', ['view', name, 'name', '--json'], { encoding: 'utf8' });
  if (result.status === 0) return true;
  if (/E404|404 Not Found/.test(result.stderr)) return false;
  throw new Error(`npm view ${name} failed: ${result.stderr.trim()}`);
}

const pending = [];
for (const pkg of publicPackages(workspace)) {
  const { name, version } = pkg.manifest;
  if (!dryRun && published(name, version)) say(`${name}@${version} is on npm already: skipped`);
  else pending.push(pkg);
}
const blocked = preflight(
  pending.map((p) => p.manifest.name),
  {
    oidc: !dryRun && Boolean(process.env.ACTIONS_ID_TOKEN_REQUEST_URL),
    exists,
    path: join(workspace, 'tooling/scripts/release/trusted-publishers.json'),
  },
);
if (blocked.length > 0) {
  for (const line of blocked) console.error(`[publish] pre-flight: ${line}`);
  say('nothing was published: every package above must be publishable first');
  process.exit(1);
}

const packDir = values['pack-dir'] ? resolve(values['pack-dir']) : mkdtempSync(join(tmpdir(), 'flight-pack-'));
mkdirSync(packDir, { recursive: true });
const done = [];
for (const { dir, manifest } of pending) {
  const { name, version } = manifest;
  const before = new Set(readdirSync(packDir));
  execFileSync('pnpm', ['pack', '--pack-destination', packDir], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
  const tarball = readdirSync(packDir).find((file) => file.endsWith('.tgz') && !before.has(file));
  if (!tarball) throw new Error(`${name}: pnpm pack produced no tarball`);
  const args = ['publish', join(packDir, tarball), '--access', 'public', '--tag', tag];
  if (provenance) args.push('--provenance');
  if (dryRun) args.push('--dry-run');
  const result = spawnSync('npm', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (result.status !== 0) {
    console.error(result.stdout, result.stderr);
    say(`${name}@${version}: npm publish failed`);
    process.exitCode = 1;
    break;
  }
  say(`${name}@${version}: ${dryRun ? 'would be published' : 'published'} as ${tag}${provenance ? ' with provenance' : ''} (${tarball})`);
  done.push({ name, version });
}

if (tag === 'latest' && !dryRun) {
  for (const { name, version } of done) {
    spawnSync('git', ['tag', `${name}@${version}`], { cwd: workspace, stdio: 'inherit' });
    console.log(`New tag: ${name}@${version}`);
  }
}
say(`${done.length} package(s) ${dryRun ? 'checked' : 'published'}; tarballs in ${packDir}`);
