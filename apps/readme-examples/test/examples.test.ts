import { describe, expect, it } from 'vitest';
import { firstUnkept, importsOf, missingFromInstall, parseReadme } from '../src/examples.js';

const README = [
  '# pkg',
  '```sh',
  'npm i @flight/koa @flight/core ioredis@5',
  '```',
  '```ts',
  "import Koa from 'koa';",
  "import { bodyParser } from '@koa/bodyparser';",
  "import { createFlightMiddleware } from '@flight/koa/sub';",
  "import { Redis } from 'ioredis';",
  "import { once } from 'node:events';",
  "import 'dotenv/config';",
  'console.log(1); // prints: 1',
  '```',
  '```ts fragment',
  "import { Cluster } from 'nowhere';",
  '```',
].join('\n');

describe('README parsing', () => {
  it('reads the install line, the examples, their imports and promises, and skips fragments', () => {
    const readme = parseReadme(README);
    expect(readme.install).toEqual(['@flight/koa', '@flight/core', 'ioredis@5']);
    expect(readme.examples).toHaveLength(1);
    expect(readme.fragments).toBe(1);
    expect(readme.examples[0]!.line).toBe(5);
    expect(readme.examples[0]!.prints).toEqual(['1']);
    expect(readme.examples[0]!.imports).toEqual(['koa', '@koa/bodyparser', '@flight/koa', 'ioredis', 'dotenv']);
  });

  it('names the imports a pasted example would miss (the @koa/bodyparser case)', () => {
    expect(missingFromInstall(parseReadme(README))).toEqual(['koa', '@koa/bodyparser', 'dotenv']);
    expect(importsOf("import fs from 'fs';\nimport { x } from 'node:path';")).toEqual([]);
  });

  it('checks promised output in order', () => {
    expect(firstUnkept(['a', 'b'], 'x a y b')).toBeUndefined();
    expect(firstUnkept(['b', 'a'], 'x a y b')).toBe('a');
    expect(firstUnkept(["[ 'owner', 'follower' ]"], "[ 'owner', 'owner' ]")).toBe("[ 'owner', 'follower' ]");
  });
});
