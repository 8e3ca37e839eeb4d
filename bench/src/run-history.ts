/**
 * The targets' verdicts of the last full runs (`bench/results/full-runs.json`), so that BENCHMARKS.md shows
 * each target in this run beside the full run before it: a goal counts as met when two full runs meet it.
 * A quick run or one limited to some scenarios or contenders is never recorded: its figures are not a full
 * run's, and it would push a full one out.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { Verdict } from './targets.js';

/** How many full runs the file keeps (this one and the one before). */
export const KEPT_FULL_RUNS = 2;

/** One full run as recorded: when, by what command, and each target's verdict and figure. */
export interface RecordedRun {
  startedAt: string;
  command: string;
  verdicts: Pick<Verdict, 'target' | 'contender' | 'figure' | 'met'>[];
}

/** Whether a run is a full one: every scenario and contender, full rounds. */
export function isFullRun(options: {
  quick: boolean;
  scenarios?: readonly string[] | undefined;
  contenders?: readonly string[] | undefined;
}): boolean {
  return !options.quick && options.scenarios === undefined && options.contenders === undefined;
}

/** The recorded runs, oldest first; none when the file is missing or unreadable (a history is a convenience). */
export function readFullRuns(file: string): RecordedRun[] {
  if (!existsSync(file)) return [];
  try {
    const runs = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    return Array.isArray(runs) ? (runs as RecordedRun[]).filter((r) => typeof r?.startedAt === 'string' && Array.isArray(r.verdicts)) : [];
  } catch {
    return [];
  }
}

/** `runs` with `run` appended, keeping the last `KEPT_FULL_RUNS`. */
export function withRun(runs: readonly RecordedRun[], run: RecordedRun): RecordedRun[] {
  return [...runs, run].slice(-KEPT_FULL_RUNS);
}

export function writeFullRuns(file: string, runs: readonly RecordedRun[]): void {
  writeFileSync(file, `${JSON.stringify(runs, null, 2)}\n`);
}

/** The verdict `previous` gave the same target and contender as `verdict`, if it had one. */
export function verdictBefore(previous: RecordedRun | undefined, verdict: Pick<Verdict, 'target' | 'contender'>) {
  return previous?.verdicts.find((v) => v.target === verdict.target && v.contender === verdict.contender);
}
