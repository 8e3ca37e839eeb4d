// Installs a package as its README says — with @flight/core, one adapter and its SDK, nothing else of ours —
// in a scratch project, and uses it from its ESM and its CommonJS build (no model call is made).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommand } from './run-command.mjs';

/** What each package is checked with alone: our tarballs to install, and a smoke test printing `alone ok`. */
export const ALONE_CHECKS = {
  '@flight/openai': {
    ours: ['@flight/core', '@flight/redis-ioredis', '@flight/openai'],
    smoke: `
import { createRequire } from 'node:module';
import OpenAI from 'openai';
import { createSingleFlight } from '@flight/core';
import { createIoredisCoordinator } from '@flight/redis-ioredis';
import { withFlights, flightOf } from '@flight/openai';

const flights = createSingleFlight({ nodeId: 'alone', mode: 'local' });
const cjs = createRequire(import.meta.url)('@flight/openai');
for (const wrap of [withFlights, cjs.withFlights]) {
  const client = wrap(new OpenAI({ apiKey: 'sk-scratch', baseURL: 'http://127.0.0.1:9/v1' }), { flights, stage: 'llm' });
  if (!(client instanceof OpenAI) || typeof client.chat.completions.create !== 'function') throw new Error('the wrapped client is not an OpenAI client');
}
if (typeof createIoredisCoordinator !== 'function' || flightOf({}) !== undefined) throw new Error('the adapter or flightOf did not load');
console.log('alone ok');
`,
  },
  '@flight/ai-sdk': {
    ours: ['@flight/core', '@flight/redis-ioredis', '@flight/ai-sdk'],
    smoke: `
import { createRequire } from 'node:module';
import { wrapLanguageModel } from 'ai';
import { createSingleFlight } from '@flight/core';
import { createIoredisCoordinator } from '@flight/redis-ioredis';
import { flightMiddleware, flightOf } from '@flight/ai-sdk';

const flights = createSingleFlight({ nodeId: 'alone', mode: 'local' });
const cjs = createRequire(import.meta.url)('@flight/ai-sdk');
const model = { specificationVersion: 'v4', provider: 'scratch', modelId: 'm', supportedUrls: {}, doGenerate: async () => { throw new Error('no call'); }, doStream: async () => { throw new Error('no call'); } };
for (const middleware of [flightMiddleware, cjs.flightMiddleware]) {
  const wrapped = wrapLanguageModel({ model, middleware: middleware({ flights }) });
  if (wrapped.modelId !== 'm' || typeof wrapped.doGenerate !== 'function') throw new Error('the wrapped model is not a language model');
}
if (typeof createIoredisCoordinator !== 'function' || flightOf(undefined) !== undefined) throw new Error('the adapter or flightOf did not load');
console.log('alone ok');
`,
  },
};

/**
 * `{ problems, summary }` after installing `name`'s tarballs of `tarballs` (by name) and their peers alone, with
 * `npm` (`[command, …args]`) and running its smoke test with `node` (`[command, …args]`).
 */
export function checkAlone(name, tarballs, { npm = ['npm'], node = [process.execPath] } = {}) {
  const { ours, smoke } = ALONE_CHECKS[name];
  const packages = ours.map((p) => tarballs.get(p)).filter(Boolean);
  if (packages.length !== ours.length) return { problems: [`missing tarballs: ${ours.join(', ')}`], summary: '' };
  const peers = new Map();
  for (const { manifest } of packages)
    for (const [peer, range] of Object.entries(manifest.peerDependencies ?? {}))
      if (!ours.includes(peer) && !['vitest', 'fast-check', '@opentelemetry/api'].includes(peer)) peers.set(peer, range);
  const dir = mkdtempSync(join(tmpdir(), 'flight-alone-'));
  try {
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'scratch-alone', private: true, type: 'module' }));
    const install = runCommand(dir, npm[0], [
      ...npm.slice(1),
      'install',
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      ...packages.map((p) => p.tarball),
      ...[...peers].map(([n, r]) => `${n}@${r}`),
    ]);
    if (!install.ok) return { problems: [`npm install of ${ours.join(', ')} alone failed:\n${install.output}`], summary: '' };
    writeFileSync(join(dir, 'smoke.mjs'), smoke);
    const result = runCommand(dir, node[0], [...node.slice(1), 'smoke.mjs']);
    if (!result.ok || !result.output.includes('alone ok')) return { problems: [`${name} alone failed:\n${result.output}`], summary: '' };
    return { problems: [], summary: `${ours.join(' + ')} with ${[...peers.keys()].join(', ')} only: used from ESM and CJS` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
