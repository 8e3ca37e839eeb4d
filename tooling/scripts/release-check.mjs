#!/usr/bin/env node
// Proves the release path on a scratch copy of the repository, step by step as the release workflow runs
// it, without publishing anything:
//   1. the workflow passes actionlint, tests every supported Node on pull requests and pushes, and is set up
//      for npm trusted publishing; every public package is in RELEASING.md and has a trusted-publisher entry
//      (release/workflow-check.mjs, release/trust.mjs);
//   2. the canary channel: `changeset version --snapshot canary` gives prerelease versions, and
//      `publish.mjs --tag canary --dry-run` packs and dry-run publishes every public package;
//   3. the release: `changeset version` applies every pending changeset (a package never released comes
//      out at 0.1.0 with its changelog), and `publish.mjs --tag latest --dry-run` passes;
//   4. each tarball: real ranges, shipped exports, resolvable source maps (release/tarball-check.mjs);
//   5. the tarballs install with npm in a scratch project and load and run (release/install-check.mjs);
//   6. @flight/openai and @flight/ai-sdk install alone with @flight/core, one adapter and their SDK
//      (release/alone-check.mjs);
//   7. each README's install line installs as written with today's majors (release/install-check.mjs), and
//      every README example type-checks as ESM and as CommonJS with TypeScript 5.9 and 7, skipLibCheck
//      false, without the optional peers, then runs on this Node, Node 22 and Node 24 against Redis and the
//      fake model and prints what it promises (release/examples-check.mjs); the core README's Prometheus recipe
//      scrapes the right figures with the OpenTelemetry SDK npm picks on this Node and on Node 24.
// A package whose `engines` exclude this Node (@flight/ai-sdk needs 22) is checked only with Node 22 and 24.
// The working tree is never touched: everything happens in temporary folders, removed at the end.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { checkInstall, checkPrometheus, checkReadmeInstalls, npmOn } from './release/install-check.mjs';
import { checkExamples } from './release/examples-check.mjs';
import { ALONE_CHECKS, checkAlone } from './release/alone-check.mjs';
import { checkTarball, readPackedManifest } from './release/tarball-check.mjs';
import { checkWorkflow, lintWorkflow } from './release/workflow-check.mjs';
import { untrustedPackages } from './release/trust.mjs';
import { admitsNode, publicPackages, unlistedPackages } from './release/packages.mjs';

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
const git = (...args) => run('git', ['-c', 'user.email=ci@localhost', '-c', 'user.name=ci', ...args]);

/** The repository's fake model (OpenAI wire format), which the OpenAI README's example calls: `{ url, close }`. */
async function startFakeModel() {
  const source = pathToFileURL(join(root, 'tooling/fake-model/src/fake-model.ts')).href;
  const code = `const { startFakeModel } = await import(${JSON.stringify(source)}); console.log((await startFakeModel({ port: 0, latencyMs: 100 })).url);`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
    cwd: join(root, 'apps/readme-examples'), // where tsx is installed
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [url] = await once(createInterface({ input: child.stdout }), 'line');
  return { url, close: () => child.kill() };
}

const versions = (dir) => Object.fromEntries(publicPackages(dir).map((p) => [p.manifest.name, p.manifest.version]));
const pendingChangesets = () => readdirSync(join(scratch, '.changeset')).filter((f) => f.endsWith('.md') && f !== 'README.md');

/** Dry-runs publish.mjs with `tag` on the scratch copy: the tarballs it packed, by package name. */
function dryPublish(tag) {
  const packDir = mkdtempSync(join(scratch, `pack-${tag}-`));
  const output = run(process.execPath, [
    join(scratch, 'tooling/scripts/publish.mjs'),
    '--tag',
    tag,
    '--dry-run',
    '--root',
    scratch,
    '--pack-dir',
    packDir,
  ]);
  const tarballs = new Map();
  for (const file of readdirSync(packDir).filter((f) => f.endsWith('.tgz'))) {
    const manifest = readPackedManifest(join(packDir, file));
    tarballs.set(manifest.name, { name: manifest.name, tarball: join(packDir, file), manifest });
  }
  for (const [name, version] of Object.entries(versions(scratch))) {
    if (!output.includes(`${name}@${version}: would be published as ${tag}`))
      fail(`${name}@${version}: not dry-run published as ${tag}\n${output}`);
  }
  return tarballs;
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
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'scratch');

  const { packageManager } = JSON.parse(readFileSync(join(scratch, 'package.json'), 'utf8'));
  const workflow = checkWorkflow(join(scratch, '.github/workflows/release.yml'), { packageManager });
  for (const missing of unlistedPackages(scratch)) fail(`RELEASING.md does not list ${missing} among the published packages`);
  for (const missing of untrustedPackages(scratch, join(scratch, 'tooling/scripts/release/trusted-publishers.json')))
    fail(`${missing} has no entry in the trusted-publisher list: publish.mjs's pre-flight would refuse the release`);
  workflow.problems.forEach(fail);
  (await lintWorkflow(join(scratch, '.github/workflows/release.yml'))).forEach(fail);
  say(`workflow: ${workflow.summary}`);

  const before = versions(scratch);
  const neverReleased = publicPackages(scratch)
    .filter((p) => !existsSync(join(p.dir, 'CHANGELOG.md')))
    .map((p) => p.manifest.name);
  const pending = pendingChangesets();

  if (pending.length > 0) {
    run('pnpm', ['exec', 'changeset', 'version', '--snapshot', 'canary']);
    const snapshot = versions(scratch);
    const bad = Object.entries(snapshot).filter(([name, v]) => v !== before[name] && !/^\d+\.\d+\.\d+-canary-\d{14}$/.test(v));
    if (bad.length > 0) fail(`snapshot versions are not <version>-canary-<time>: ${bad.map(([n, v]) => `${n} ${v}`).join(', ')}`);
    dryPublish('canary');
    say(
      `canary: ${Object.entries(snapshot)
        .map(([n, v]) => `${n}@${v}`)
        .join(', ')} would be published as canary`,
    );
    git('reset', '-q', '--hard');
    git('clean', '-qfd');
  }

  run('pnpm', ['exec', 'changeset', 'version']);
  const after = versions(scratch);
  const moved = Object.keys(after).filter((name) => after[name] !== before[name]);
  say(
    `changeset version: ${pending.length} changesets applied; ${moved.map((n) => `${n} ${before[n]} → ${after[n]}`).join(', ') || 'no version moved'}`,
  );
  if (pending.length > 0 && moved.length === 0) fail('changesets are pending but no public package version moved');
  if (pendingChangesets().length > 0) fail(`changesets left after version: ${pendingChangesets().join(', ')}`);
  for (const name of neverReleased) {
    if (after[name] !== '0.1.0') fail(`${name} is released for the first time as ${after[name]}; the first public version is 0.1.0`);
    const pkg = publicPackages(scratch).find((p) => p.manifest.name === name);
    const changelog = existsSync(join(pkg.dir, 'CHANGELOG.md')) ? readFileSync(join(pkg.dir, 'CHANGELOG.md'), 'utf8') : '';
    if (!changelog.includes('## 0.1.0')) fail(`${name}: no 0.1.0 section in its CHANGELOG.md`);
  }

  const tarballs = dryPublish('latest');
  for (const [name, version] of Object.entries(after)) {
    const packed = tarballs.get(name);
    if (!packed) {
      fail(`${name}: publish.mjs packed no tarball`);
      continue;
    }
    const { problems, summary } = checkTarball(name, version, packed.tarball);
    problems.forEach(fail);
    say(`${name}@${version}: packed, dry-run published; ${summary}`);
  }

  const thisMajor = Number(process.versions.node.split('.')[0]);
  const install = checkInstall([...tarballs.values()].filter((p) => admitsNode(p.manifest, thisMajor)));
  install.problems.forEach(fail);
  if (install.summary) say(`scratch install: ${install.summary}`);
  // npm picks what its Node runs: this Node's npm (openai 6 on Node 20), and Node 24's (today's majors).
  const nodeOf = (major) => ['npx', '-y', '-p', `node@${major}`, 'node'];
  const here = [`Node ${process.versions.node}`, ['npm'], thisMajor];
  // [label, npm, the lowest Node its checks run examples on]
  const node24 = ['Node 24', npmOn(nodeOf(24)), 22];
  for (const name of Object.keys(ALONE_CHECKS)) {
    const manifest = tarballs.get(name)?.manifest;
    const [label, npm, node] = admitsNode(manifest, thisMajor)
      ? [here[0], ['npm'], [process.execPath]]
      : [node24[0], node24[1], nodeOf(24)];
    const alone = checkAlone(name, tarballs, { npm, node });
    alone.problems.forEach(fail);
    if (alone.summary) say(`installed alone, npm on ${label}: ${alone.summary}`);
  }
  const readmes = [root, ...publicPackages(root).map((p) => p.dir)].map((dir) => ({
    name: relative(root, dir) || '.',
    markdown: readFileSync(join(dir, 'README.md'), 'utf8'),
    manifest: dir === root ? undefined : JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')),
  }));
  /** The READMEs of the packages that run on Node `major` (the lowest Node a check runs them on). */
  const readmesFor = (major) => readmes.filter((readme) => admitsNode(readme.manifest, major));
  for (const [label, npm, major] of [here, node24]) {
    const installs = checkReadmeInstalls([...tarballs.values()], readmesFor(major), npm);
    installs.problems.forEach((problem) => fail(`${label}: ${problem}`));
    say(`install lines, npm on ${label}: ${installs.summary}`);
  }
  const prometheus = checkPrometheus(
    [...tarballs.values()],
    [
      [here[0], [process.execPath]],
      [node24[0], nodeOf(24)],
    ],
  );
  prometheus.problems.forEach(fail);
  say(`prometheus: ${prometheus.summary}`);
  const model = await startFakeModel();
  try {
    const env = {
      REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      OPENAI_BASE_URL: `${model.url}/v1`,
      OPENAI_API_KEY: 'sk-release-check',
    };
    const runs = [
      { label: here[0], npm: here[1], lowest: here[2], nodes: [[here[0], process.execPath, '--import', 'tsx']] },
      {
        label: node24[0],
        npm: node24[1],
        lowest: node24[2],
        nodes: [
          ['Node 22', ...nodeOf(22)],
          ['Node 24', ...nodeOf(24)],
        ],
      },
    ];
    for (const { label, npm, lowest, nodes } of runs) {
      const packages = [...tarballs.values()].filter((p) => admitsNode(p.manifest, lowest));
      const examples = checkExamples(packages, readmesFor(lowest), { npm, nodes, env });
      examples.problems.forEach((problem) => fail(`npm on ${label}: ${problem}`));
      if (examples.summary) say(`examples, npm on ${label}: ${examples.summary}`);
    }
  } finally {
    model.close();
  }
  if (!process.exitCode) say('release path OK');
} catch (error) {
  fail(error instanceof Error ? error.message : String(error));
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
