// Installs the packed tarballs in a scratch project, as a user would (npm, the registry for everything
// else), and uses them: every export loads through `import` and through `require`, a local single-flight
// runs three calls once, the dashboard serves its page from the ESM and the CommonJS build, and the
// adapters' `flight` command starts.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installLine } from './readme-parts.mjs';
import { runCommand } from './run-command.mjs';

/** Entries that need test tooling of the user's (vitest, fast-check) to load. */
const NEEDS_TEST_TOOLS = new Set(['@flight/core/testing']);

const SMOKE = `
import { once } from 'node:events';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { createSingleFlight } from '@flight/core';
import { createFlightDashboard } from '@flight/dashboard';

const flight = createSingleFlight({ nodeId: 'scratch', mode: 'local' });
let runs = 0;
const results = await Promise.all([1, 2, 3].map(() => flight.execute('smoke', 'k', async () => (runs++, await new Promise((r) => setTimeout(r, 20)), 42))));
if (runs !== 1 || results.some((r) => r.value !== 42)) throw new Error('three calls did not share one run: ' + runs);
const cjs = createRequire(import.meta.url)('@flight/dashboard');
for (const create of [createFlightDashboard, cjs.createFlightDashboard]) {
  const dashboard = create({ singleFlight: flight });
  const server = createServer(dashboard.handler).listen(0, '127.0.0.1');
  await once(server, 'listening');
  const base = 'http://127.0.0.1:' + server.address().port;
  const page = await fetch(base + '/');
  if (page.status !== 200 || !(await page.text()).includes('<script nonce=')) throw new Error('the dashboard page did not load');
  const state = await (await fetch(base + '/state')).json();
  if (state.node.nodeId !== 'scratch') throw new Error('the dashboard state is wrong');
  dashboard.close();
  server.close();
}
console.log('smoke ok');
`;

/** `{ problems, summary }` after installing `packages` ({ name, tarball, manifest }) in a scratch project. */
export function checkInstall(packages) {
  const dir = mkdtempSync(join(tmpdir(), 'flight-install-'));
  const problems = [];
  try {
    const ours = new Set(packages.map((p) => p.name));
    const peers = new Map();
    for (const { manifest } of packages)
      for (const [name, range] of Object.entries(manifest.peerDependencies ?? {}))
        if (!ours.has(name) && !['vitest', 'fast-check'].includes(name)) peers.set(name, range);
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module' }));
    const install = runCommand(dir, 'npm', [
      'install',
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      ...packages.map((p) => p.tarball),
      ...[...peers].map(([n, r]) => `${n}@${r}`),
    ]);
    if (!install.ok) return { problems: [`npm install of the tarballs failed:\n${install.output}`], summary: '' };

    const entries = packages.flatMap(({ name, manifest }) =>
      Object.keys(manifest.exports ?? { '.': null })
        .filter((subpath) => subpath !== './package.json')
        .map((subpath) => (subpath === '.' ? name : `${name}/${subpath.slice(2)}`))
        .filter((spec) => !NEEDS_TEST_TOOLS.has(spec)),
    );
    const load = (kind) =>
      entries
        .map((spec) =>
          kind === 'esm'
            ? `{ const m = await import(${JSON.stringify(spec)}); if (Object.keys(m).length === 0) throw new Error('${spec}: no exports'); }`
            : `{ const m = require(${JSON.stringify(spec)}); if (Object.keys(m).length === 0) throw new Error('${spec}: no exports'); }`,
        )
        .join('\n');
    writeFileSync(join(dir, 'load.mjs'), load('esm'));
    writeFileSync(join(dir, 'load.cjs'), load('cjs'));
    writeFileSync(join(dir, 'smoke.mjs'), SMOKE);
    for (const file of ['load.mjs', 'load.cjs', 'smoke.mjs']) {
      const result = runCommand(dir, process.execPath, [file]);
      if (!result.ok) problems.push(`${file} failed in the scratch project:\n${result.output}`);
    }
    const bin = runCommand(dir, join(dir, 'node_modules', '.bin', 'flight'), ['--help']);
    if (!bin.ok || !bin.output.includes('usage: flight')) problems.push(`npx flight --help failed:\n${bin.output}`);
    const summary = `${packages.length} tarballs and their peers (${[...peers.keys()].join(', ')}) installed with npm; ${entries.length} entries load by import and by require; a local flight ran once for 3 calls; the dashboard page served from ESM and CJS; \`flight --help\` runs`;
    return { problems, summary };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Our packages that `names` depend on, directly or through each other, and that `names` does not list. */
function ourDependencies(names, manifests) {
  const found = new Set();
  const visit = (name) => {
    for (const dep of Object.keys(manifests.get(name)?.dependencies ?? {}))
      if (manifests.has(dep) && !found.has(dep) && !names.includes(dep)) {
        found.add(dep);
        visit(dep);
      }
  };
  names.forEach(visit);
  return [...found];
}

/**
 * The npm of this machine run by another Node: `[command, ...args]` to put before npm's own arguments. npm
 * picks the versions that Node runs (`engines`), so today's majors come only with today's Node: openai 7 on
 * Node 22+, while the Node 20 npm installs openai 6.
 */
export function npmOn(node) {
  const cli = join(runCommand(tmpdir(), 'npm', ['root', '-g']).output.split('\n').at(-1), 'npm', 'bin', 'npm-cli.js');
  return [...node, cli];
}

/**
 * `{ problems, summary }` after running each README's install line as written (`npm i …`, no flags) with
 * `npm` (see `npmOn`) in its own scratch project, our packages from their tarballs: each installs without a
 * peer conflict and leaves a tree `npm ls` calls valid; the summary names the majors npm picked.
 */
export function checkReadmeInstalls(packages, readmes, npm = ['npm']) {
  const tarballs = new Map(packages.map((p) => [p.name, p.tarball]));
  const manifests = new Map(packages.map((p) => [p.name, p.manifest]));
  const problems = [];
  const installed = new Set();
  let checked = 0;
  for (const { name, markdown } of readmes) {
    const line = installLine(markdown);
    if (line.length === 0) continue;
    const dir = mkdtempSync(join(tmpdir(), 'flight-readme-install-'));
    try {
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'scratch-readme', private: true, type: 'module' }));
      // Our packages the named ones depend on are not on the registry yet: their tarballs come along.
      const specs = [
        ...line.map((spec) => tarballs.get(spec) ?? spec),
        ...ourDependencies(line, manifests).map((dep) => tarballs.get(dep)),
      ];
      const install = runCommand(dir, npm[0], [...npm.slice(1), 'install', '--no-audit', '--no-fund', ...specs]);
      if (!install.ok) problems.push(`${name}/README.md: \`npm i ${line.join(' ')}\` failed:\n${install.output}`);
      else if (/overriding peer dependency|ERESOLVE/i.test(install.output))
        problems.push(`${name}/README.md: \`npm i ${line.join(' ')}\` overrode a peer dependency:\n${install.output}`);
      else {
        const tree = runCommand(dir, npm[0], [...npm.slice(1), 'ls', '--all']);
        if (!tree.ok) problems.push(`${name}/README.md: npm ls is invalid after its install line:\n${tree.output}`);
        const versions = runCommand(dir, npm[0], [...npm.slice(1), 'ls', '--depth=0', '--json']);
        if (versions.ok)
          for (const [dep, { version }] of Object.entries(JSON.parse(versions.output).dependencies ?? {}))
            if (!dep.startsWith('@flight/')) installed.add(`${dep}@${version.split('.')[0]}`);
      }
      checked++;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return {
    problems,
    summary: `${checked} README install lines install as written (no flags) with a valid npm ls; majors npm picked: ${[...installed].sort().join(', ')}`,
  };
}

const PROMETHEUS_SMOKE = `
import { createServer } from 'node:http';
import { metrics } from '@opentelemetry/api';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { createSingleFlight } from '@flight/core';

const exporter = new PrometheusExporter({ preventServerStart: true });
metrics.setGlobalMeterProvider(new MeterProvider({ readers: [exporter] }));
const flight = createSingleFlight({ nodeId: 'prometheus', mode: 'local' });
await Promise.all([1, 2, 3].map(() => flight.execute('answer', 'k', async () => (await new Promise((r) => setTimeout(r, 20)), 42))));
const server = createServer((req, res) => exporter.getMetricsRequestHandler(req, res)).listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));
const text = await (await fetch('http://127.0.0.1:' + server.address().port + '/metrics')).text();
const value = (name) => Number(new RegExp('^' + name + '\\\\{flight_stage="answer"[^}]*\\\\} (\\\\d+)', 'm').exec(text)?.[1]);
if (value('flight_supplier_runs_total') !== 1 || value('flight_upstream_saved_total') !== 2) throw new Error('unexpected metrics:\\n' + text);
server.close();
await flight.close();
const { version } = JSON.parse(await (await import('node:fs/promises')).readFile('node_modules/@opentelemetry/sdk-metrics/package.json', 'utf8'));
console.log('prometheus ok: SDK ' + version);
`;

/**
 * `{ problems, summary }` after the core README's Prometheus recipe, installed as it says
 * (`npm i @opentelemetry/api @opentelemetry/sdk-metrics @opentelemetry/exporter-prometheus`) beside the
 * @flight/core tarball, with each of `nodes` (`[label, node binary prefix]`): npm picks the SDK that Node
 * runs, and a scrape shows 1 supplier run and 2 calls saved for 3 identical calls.
 */
export function checkPrometheus(packages, nodes) {
  const core = packages.find((p) => p.name === '@flight/core');
  const problems = [];
  const seen = [];
  for (const [label, node] of nodes) {
    const dir = mkdtempSync(join(tmpdir(), 'flight-prometheus-'));
    try {
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'scratch-prometheus', private: true, type: 'module' }));
      const otel = ['@opentelemetry/api', '@opentelemetry/sdk-metrics', '@opentelemetry/exporter-prometheus'];
      const npm = npmOn(node);
      const install = runCommand(dir, npm[0], [
        ...npm.slice(1),
        'install',
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
        core.tarball,
        ...otel,
      ]);
      if (!install.ok) {
        problems.push(`the Prometheus recipe did not install on ${label}:\n${install.output}`);
        continue;
      }
      writeFileSync(join(dir, 'smoke.mjs'), PROMETHEUS_SMOKE);
      const smoke = runCommand(dir, node[0], [...node.slice(1), 'smoke.mjs']);
      if (!smoke.ok || !smoke.output.includes('prometheus ok')) problems.push(`the Prometheus recipe failed on ${label}:\n${smoke.output}`);
      else seen.push(`${label}: ${smoke.output.split('\n').at(-1).replace('prometheus ok: ', '')}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return { problems, summary: `the core README's Prometheus recipe scrapes 1 run and 2 saved (${seen.join(', ')})` };
}
