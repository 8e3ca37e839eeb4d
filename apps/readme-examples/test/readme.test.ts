/**
 * Every README example runs as pasted after its own install line, against Redis, and prints what its
 * comments promise. Each example runs as a real process (tsx), with `REDIS_URL` pointing at the test Redis.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFakeModel, type FakeModel } from '@flight/fake-model';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firstUnkept, missingFromInstall, parseReadme, unrequestedRoutes, type ReadmeExample } from '../src/examples.js';

const APP = join(dirname(fileURLToPath(import.meta.url)), '..');
const ROOT = join(APP, '..', '..');
const RUN_DIR = join(APP, '.examples');
const TYPECHECK_DIR = join(APP, '.examples-typecheck');
const READMES = [
  '.',
  'packages/core',
  'packages/redis-ioredis',
  'packages/redis-node',
  'packages/express',
  'packages/koa',
  'packages/fastify',
  'packages/dashboard',
  'packages/openai',
];

/** The fake model (OpenAI wire format) the OpenAI README's examples call, as `OPENAI_BASE_URL`. */
let model: FakeModel | undefined;
beforeAll(async () => {
  model = await startFakeModel({ port: 0, latencyMs: 100 });
});

afterAll(async () => {
  await model?.close();
  rmSync(RUN_DIR, { recursive: true, force: true });
  rmSync(TYPECHECK_DIR, { recursive: true, force: true });
});

/**
 * Type-checks examples as a TypeScript user's project would (strict, Node ESM, the packages' published
 * declarations from their builds): `{ ok, output }`.
 */
function typecheck(files: Record<string, string>, skipLibCheck = true): Promise<{ ok: boolean; output: string }> {
  rmSync(TYPECHECK_DIR, { recursive: true, force: true });
  mkdirSync(TYPECHECK_DIR, { recursive: true });
  for (const [name, code] of Object.entries(files)) writeFileSync(join(TYPECHECK_DIR, name), code);
  const compilerOptions = {
    strict: true,
    module: 'nodenext',
    target: 'es2022',
    lib: ['es2023'],
    types: ['node'],
    noEmit: true,
    skipLibCheck,
  };
  writeFileSync(join(TYPECHECK_DIR, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['*.mts', '*.cts'] }));
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  return new Promise((resolve) => {
    execFile(process.execPath, [tsc, '-p', TYPECHECK_DIR], { cwd: APP, timeout: 120_000 }, (error, stdout, stderr) =>
      resolve({ ok: !error, output: `${stdout}${stderr}` }),
    );
  });
}

it('every README example type-checks as pasted (strict TypeScript, the published declarations)', async () => {
  const files: Record<string, string> = {};
  for (const dir of READMES) {
    for (const example of parseReadme(readFileSync(join(ROOT, dir, 'README.md'), 'utf8')).examples) {
      files[`${dir.replace(/\W+/g, '-')}-${example.line}.mts`] = example.code;
    }
  }
  const { ok, output } = await typecheck(files);
  expect(output).toBe('');
  expect(ok).toBe(true);
}, 150_000);

function runExample(name: string, example: ReadmeExample): Promise<{ code: number | null; output: string }> {
  mkdirSync(RUN_DIR, { recursive: true });
  const file = join(RUN_DIR, `${name.replace(/\W+/g, '-')}-${example.line}.mts`);
  writeFileSync(file, example.code);
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--conditions=@flight/source', '--import', 'tsx', file],
      {
        cwd: APP,
        timeout: 30_000,
        env: {
          ...process.env,
          REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
          OPENAI_BASE_URL: `${model!.url}/v1`,
          OPENAI_API_KEY: 'sk-readme-example',
        },
      },
      (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, output: `${stdout}${stderr}` }),
    );
  });
}

it('a program with both ESM and CJS files sees one @flight/fastify augmentation of Fastify (no TS2717, library checks on)', async () => {
  const { ok, output } = await typecheck(
    {
      'esm.mts': [
        "import Fastify from 'fastify';",
        "import { createSingleFlight } from '@flight/core';",
        "import { fastifyFlight } from '@flight/fastify';",
        'const app = Fastify();',
        'await app.register(fastifyFlight, { singleFlight: createSingleFlight() });',
        "app.get('/r', { config: { flight: 'report' } }, async () => app.singleFlight.mode);",
        "export const purged: Promise<boolean> = app.purgeFlight({} as never, 'report');",
      ].join('\n'),
      'cjs.cts': [
        "import Fastify = require('fastify');",
        "import core = require('@flight/core');",
        "import flight = require('@flight/fastify');",
        'const app = Fastify.fastify();',
        'void app.register(flight.fastifyFlight, { singleFlight: core.createSingleFlight() });',
        'export const mode: string = app.singleFlight.mode;',
      ].join('\n'),
    },
    false,
  );
  expect(output.split('\n').filter((line) => line.includes('@flight') || line.includes('.examples-typecheck'))).toEqual([]);
  expect(output).not.toContain('TS2717');
  expect(ok, output).toBe(true);
}, 150_000);

describe.each(READMES)('%s/README.md', (dir) => {
  const readme = parseReadme(readFileSync(join(ROOT, dir, 'README.md'), 'utf8'));

  it('has an install line that names every package its examples import', () => {
    expect(readme.install, 'an `npm i …` line in a sh block').not.toBeNull();
    expect(missingFromInstall(readme)).toEqual([]);
  });

  it('has at least one runnable example that promises its output', () => {
    expect(readme.examples.length).toBeGreaterThan(0);
    for (const example of readme.examples) expect(example.prints.length, `example at line ${example.line}`).toBeGreaterThan(0);
  });

  it('requests every route its examples declare', () => {
    for (const example of readme.examples) expect(unrequestedRoutes(example.code), `example at line ${example.line}`).toEqual([]);
  });

  for (const example of readme.examples) {
    it(`example at line ${example.line} runs and prints what it says`, async () => {
      const { code, output } = await runExample(dir, example);
      expect(code, output).toBe(0);
      expect(firstUnkept(example.prints, output), output).toBeUndefined();
    }, 40_000);
  }
});
