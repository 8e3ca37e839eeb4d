/**
 * The release check's type check of the README examples: how an example becomes a CommonJS program, whose
 * errors count, and that a declaration naming an optional peer fails it (a real npm install and tsc run).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { asCommonJs, checkTypes, errorsByOwner, installLine, readmeExamples } from '../release/types-check.mjs';

describe('README examples as programs', () => {
  const readme = [
    '```sh',
    'npm i @flight/core @flight/redis-ioredis ioredis --save',
    '```',
    '```ts',
    "import { createSingleFlight } from '@flight/core';",
    'const flight = createSingleFlight();',
    'await flight.close();',
    '```',
    '```ts fragment',
    'flight.stats();',
    '```',
  ].join('\n');

  it('reads the install line and the runnable examples, not the fragments', () => {
    expect(installLine(readme)).toEqual(['@flight/core', '@flight/redis-ioredis', 'ioredis']);
    expect(readmeExamples(readme)).toEqual([{ line: 4, code: expect.stringContaining('createSingleFlight()') }]);
  });

  it('moves the imports first and the body into an async function for CommonJS', () => {
    const code = ['import {', '  a,', "} from 'x';", 'const b = await a();', "import c from 'y';", 'c(b);'].join('\n');
    expect(asCommonJs(code)).toBe(
      [
        'import {',
        '  a,',
        "} from 'x';",
        "import c from 'y';",
        'export async function main(): Promise<void> {',
        '  const b = await a();',
        '  c(b);',
        '}',
        '',
      ].join('\n'),
    );
  });

  it('counts errors in our declarations and the examples, and sets apart other packages’ own typings', () => {
    const output = [
      "node_modules/@flight/core/dist/adapter.d.ts(5,37): error TS2307: Cannot find module '@opentelemetry/api'.",
      "node_modules/ioredis/built/errors/WatchError.d.ts(1,28): error TS7016: Could not find a declaration file for module 'redis-errors'.",
      'src/packages-koa-12.cts(3,1): error TS2719: Two different types with this name exist.',
      '  Try `npm i --save-dev @types/redis-errors`',
    ].join('\n');
    const { ours, theirs } = errorsByOwner(output);
    expect(ours.map((line) => line.split('(')[0])).toEqual(['node_modules/@flight/core/dist/adapter.d.ts', 'src/packages-koa-12.cts']);
    expect(theirs.map((line) => line.split('(')[0])).toEqual(['node_modules/ioredis/built/errors/WatchError.d.ts']);
  });
});

describe('the type check itself', () => {
  it('fails when a declaration imports an optional peer that is not installed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'flight-types-test-'));
    const pkg = join(dir, 'pkg');
    execFileSync('mkdir', ['-p', pkg]);
    const manifest = {
      name: '@flight/optional-peer-probe',
      version: '1.0.0',
      type: 'module',
      exports: { '.': { types: './index.d.ts', default: './index.js' } },
      peerDependencies: { '@opentelemetry/api': '^1.9.0' },
      peerDependenciesMeta: { '@opentelemetry/api': { optional: true } },
    };
    writeFileSync(join(pkg, 'package.json'), JSON.stringify(manifest));
    writeFileSync(join(pkg, 'index.js'), 'export const probe = () => 1;\n');
    writeFileSync(
      join(pkg, 'index.d.ts'),
      "import type { Span } from '@opentelemetry/api';\nexport declare const probe: (span?: Span) => number;\n",
    );
    execFileSync('npm', ['pack', '--pack-destination', dir], { cwd: pkg, stdio: 'ignore' });
    const tarball = join(
      dir,
      readdirSync(dir).find((f) => f.endsWith('.tgz'))!,
    );
    const markdown = ['```ts', "import { probe } from '@flight/optional-peer-probe';", 'console.log(probe());', '```'].join('\n');
    const { problems, summary } = checkTypes([{ name: manifest.name, tarball, manifest }], [{ name: 'probe', markdown }]);
    expect(problems.join('\n')).toMatch(/index\.d\.ts\(1,\d+\): error TS2307: Cannot find module '@opentelemetry\/api'/);
    expect(problems.join('\n')).toMatch(/TypeScript 5\.9\.\d+ rejects/);
    expect(problems.join('\n')).toMatch(/TypeScript 7\.\d+\.\d+ rejects/);
    expect(summary).toMatch(/without @opentelemetry\/api/);
  }, 300_000);
});
