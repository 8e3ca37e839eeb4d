/**
 * The release check's check of the README examples: how an example becomes a CommonJS program, whose errors
 * count, and that a declaration naming an optional peer or an unkept `// prints:` fails it (a real npm install,
 * tsc and run).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { asCommonJs, checkExamples, errorsByOwner, firstUnkept, installLine, readmeExamples } from '../release/examples-check.mjs';

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
    expect(readmeExamples(readme)).toEqual([{ line: 4, code: expect.stringContaining('createSingleFlight()'), prints: [] }]);
    expect(readmeExamples('```ts\nconsole.log(1); // prints: 1\nconsole.log(2); // prints: two\n```').map((e) => e.prints)).toEqual([
      ['1', 'two'],
    ]);
    expect(firstUnkept(['a', 'b'], 'x a y b')).toBeUndefined();
    expect(firstUnkept(['b', 'a'], 'x a y b')).toBe('a');
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

describe('the check itself', () => {
  it('fails on a declaration that imports an optional peer not installed, and on an example that does not print its promise', () => {
    const dir = mkdtempSync(join(tmpdir(), 'flight-examples-test-'));
    const pkg = join(dir, 'pkg');
    mkdirSync(pkg);
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
    const markdown = [
      '```ts',
      "import { probe } from '@flight/optional-peer-probe';",
      'const n: number = probe();',
      'console.log(`probe ${n}`); // prints: probe 1',
      '```',
      '```ts',
      "import { probe } from '@flight/optional-peer-probe';",
      'console.log(`probe ${probe()}`); // prints: probe 2',
      '```',
    ].join('\n');
    const { problems, summary } = checkExamples([{ name: manifest.name, tarball, manifest }], [{ name: 'probe', markdown }], {
      nodes: [['this Node', process.execPath, '--import', 'tsx']],
    });
    const text = problems.join('\n');
    expect(text).toMatch(/index\.d\.ts\(1,\d+\): error TS2307: Cannot find module '@opentelemetry\/api'/);
    expect(text).toMatch(/TypeScript 5\.9\.\d+ rejects/);
    expect(text).toMatch(/TypeScript 7\.\d+\.\d+ rejects/);
    expect(text).toMatch(/probe\/README\.md:6 on this Node did not print "probe 2"/);
    expect(text).not.toMatch(/README\.md:1 /);
    expect(summary).toMatch(/without @opentelemetry\/api/);
  }, 300_000);
});
