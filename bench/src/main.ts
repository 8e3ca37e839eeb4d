/**
 * `pnpm bench [--quick] [--scenarios herd,wakeup,...] [--contenders naive,local,...] [--no-write]`
 * Prints the tables, writes BENCHMARKS.md at the repository root and bench/results/latest.json; a full run's
 * verdicts also go to bench/results/full-runs.json, which keeps the last two (run-history.ts).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { runBench, SCENARIOS, type ScenarioName } from './bench.js';
import { CONTENDERS, type ContenderName } from './contenders/index.js';
import { readProfileNotes } from './profiles.js';
import { renderMarkdown, renderTables } from './report.js';
import { isFullRun, readFullRuns, withRun, writeFullRuns } from './run-history.js';
import { verdictLabel, verdicts } from './targets.js';

const benchDir = join(dirname(fileURLToPath(import.meta.url)), '..');

function list<T extends string>(value: string | undefined, allowed: readonly T[], what: string): T[] | undefined {
  if (!value) return undefined;
  const items = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const item of items) if (!allowed.includes(item as T)) throw new Error(`unknown ${what} "${item}"; use ${allowed.join(', ')}`);
  return items as T[];
}

/** Resolves true when a scenario failed (the figures of the others are still printed and written). */
async function main(): Promise<boolean> {
  const { values } = parseArgs({
    args: process.argv.slice(2).filter((a) => a !== '--'),
    options: {
      quick: { type: 'boolean', default: false },
      scenarios: { type: 'string' },
      contenders: { type: 'string' },
      'no-write': { type: 'boolean', default: false },
    },
  });
  const selection = {
    quick: values.quick,
    scenarios: list<ScenarioName>(values.scenarios, SCENARIOS, 'scenario'),
    contenders: list<ContenderName>(values.contenders, CONTENDERS, 'contender'),
  };
  const run = await runBench({ ...selection, log: (m) => console.log(`[bench] ${m}`) });
  console.log(renderTables(run.rows, false));
  console.log('\nTargets');
  const judged = verdicts(run.rows);
  for (const v of judged) console.log(`  ${verdictLabel(v.met).padEnd(4)} ${v.target} — ${v.contender}: ${v.figure}`);
  for (const s of run.skipped) console.log(`  not run: ${s.contender} — ${s.reason}`);
  for (const f of run.failed) console.log(`  scenario failed: ${f.scenario} — ${f.reason}`);
  const args = process.argv.slice(2).filter((a) => a !== '--' && a !== '--no-write');
  const command = ['pnpm bench', ...args].join(' ');
  if (!values['no-write']) {
    mkdirSync(join(benchDir, 'results'), { recursive: true });
    writeFileSync(join(benchDir, 'results', 'latest.json'), `${JSON.stringify(run.rows, null, 2)}\n`);
    const history = join(benchDir, 'results', 'full-runs.json');
    const fullRuns = readFullRuns(history);
    const previous = fullRuns.at(-1);
    if (isFullRun(selection)) {
      const recorded = judged.map(({ target, contender, figure, met }) => ({ target, contender, figure, met }));
      writeFullRuns(history, withRun(fullRuns, { startedAt: run.startedAt, command, verdicts: recorded }));
    }
    writeFileSync(
      join(benchDir, '..', 'BENCHMARKS.md'),
      renderMarkdown(run, command, readProfileNotes(join(benchDir, 'profiles')), previous),
    );
    console.log(`\nwrote BENCHMARKS.md and bench/results/latest.json (${(run.durationMs / 1000).toFixed(1)} s)`);
  }
  return run.failed.length > 0;
}

main().then(
  (failed) => process.exit(failed ? 1 : 0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
