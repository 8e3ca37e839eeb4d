/**
 * The release check's reading of the release workflow: the repository's workflow passes, and each way
 * of breaking trusted publishing is named.
 */
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { unlistedPackages } from '../release/packages.mjs';
import { checkWorkflow } from '../release/workflow-check.mjs';

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
    ['tests not on Node 20', (t) => t.replace('node-version: 20', 'node-version: 22'), /Node 20/],
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
