// Installs @flight/openai as its README says — with @flight/core, one adapter and `openai`, nothing else of
// ours — in a scratch project, and wraps a client from its ESM and its CommonJS build (no call is made).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ALONE = ['@flight/core', '@flight/redis-ioredis', '@flight/openai'];

const SMOKE = `
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
`;

function run(cwd, cmd, args) {
  const result = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout: 300_000 });
  return { ok: result.status === 0, output: `${result.stdout ?? ''}${result.stderr ?? ''}`.trim() };
}

/** `{ problems, summary }` after installing the three tarballs of `tarballs` (by name) and their peers alone. */
export function checkOpenAIAlone(tarballs) {
  const packages = ALONE.map((name) => tarballs.get(name)).filter(Boolean);
  if (packages.length !== ALONE.length) return { problems: [`missing tarballs: ${ALONE.join(', ')}`], summary: '' };
  const peers = new Map();
  for (const { manifest } of packages)
    for (const [name, range] of Object.entries(manifest.peerDependencies ?? {}))
      if (!ALONE.includes(name) && !['vitest', 'fast-check', '@opentelemetry/api'].includes(name)) peers.set(name, range);
  const dir = mkdtempSync(join(tmpdir(), 'flight-alone-'));
  try {
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'scratch-alone', private: true, type: 'module' }));
    const install = run(dir, 'npm', [
      'install',
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      ...packages.map((p) => p.tarball),
      ...[...peers].map(([n, r]) => `${n}@${r}`),
    ]);
    if (!install.ok) return { problems: [`npm install of ${ALONE.join(', ')} alone failed:\n${install.output}`], summary: '' };
    writeFileSync(join(dir, 'smoke.mjs'), SMOKE);
    const smoke = run(dir, process.execPath, ['smoke.mjs']);
    if (!smoke.ok || !smoke.output.includes('alone ok'))
      return { problems: [`@flight/openai alone failed:\n${smoke.output}`], summary: '' };
    return { problems: [], summary: `${ALONE.join(' + ')} with ${[...peers.keys()].join(', ')} only: a client wrapped from ESM and CJS` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
