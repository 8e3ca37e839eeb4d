import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BenchRun } from '../src/bench.js';
import type { ResultRow } from '../src/context.js';
import { renderMarkdown } from '../src/report.js';
import { isFullRun, readFullRuns, withRun, writeFullRuns, type RecordedRun } from '../src/run-history.js';

const http = (urls: string, contender: string, reqPerSec: number): ResultRow => ({
  scenario: 'http',
  urls,
  contender,
  reqPerSec,
  upstreamCalls: null,
  p50Ms: null,
  p99Ms: null,
  maxMs: null,
});

const benchRun = (rows: ResultRow[]): BenchRun => ({
  rows,
  contenders: [],
  skipped: [],
  failed: [],
  redis: { version: '7.0.15', own: true },
  quick: false,
  durationMs: 1000,
  startedAt: '2026-12-06T02:00:00.000Z',
  load: [1, 1],
  library: 'built',
});

const recorded = (startedAt: string, verdicts: RecordedRun['verdicts'] = []): RecordedRun => ({
  startedAt,
  command: 'pnpm bench',
  verdicts,
});

describe('full-run history', () => {
  it('records only full runs: every scenario and contender, full rounds', () => {
    expect(isFullRun({ quick: false })).toBe(true);
    expect(isFullRun({ quick: true })).toBe(false);
    expect(isFullRun({ quick: false, scenarios: ['http'] })).toBe(false);
    expect(isFullRun({ quick: false, contenders: ['naive'] })).toBe(false);
  });

  it('keeps the last two runs, oldest first, and reads them back', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'bench-history-')), 'full-runs.json');
    expect(readFullRuns(file)).toEqual([]);
    let runs = withRun([], recorded('a'));
    runs = withRun(runs, recorded('b'));
    runs = withRun(runs, recorded('c'));
    writeFullRuns(file, runs);
    expect(readFullRuns(file).map((r) => r.startedAt)).toEqual(['b', 'c']);
  });

  it('reads an unreadable file as no history', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'bench-history-')), 'full-runs.json');
    writeFileSync(file, '{ not json');
    expect(readFullRuns(file)).toEqual([]);
    writeFileSync(file, '[{"startedAt": 1}]');
    expect(readFullRuns(file)).toEqual([]);
  });

  it("shows each target beside the previous full run's verdict and counts those both runs met", () => {
    const rows = [http('distinct', 'plain', 1000), http('distinct', 'flight-distributed', 850), http('distinct', 'flight-local', 900)];
    const previous = recorded('2026-12-05T22:47:29.601Z', [
      {
        target: 'HTTP, distinct URLs: req/s ≥ 0.8× plain',
        contender: 'flight-distributed',
        figure: '800 vs plain 1,000 req/s (0.8×)',
        met: true,
      },
      {
        target: 'HTTP, distinct URLs: req/s ≥ 0.95× plain',
        contender: 'flight-local',
        figure: '700 vs plain 1,000 req/s (0.7×)',
        met: false,
      },
    ]);
    const markdown = renderMarkdown(benchRun(rows), 'pnpm bench', [], previous);
    expect(markdown).toContain('| target | contender | figure | verdict | previous full run |');
    expect(markdown).toContain('Met in both runs: 1 of 2 targets.');
    expect(markdown).toMatch(
      /\| flight-distributed \| 850 vs plain 1,000 req\/s \(0\.85×\) \| PASS \| PASS — 800 vs plain 1,000 req\/s \(0\.8×\) \|/,
    );
    expect(markdown).toMatch(/\| flight-local \| 900 vs plain 1,000 req\/s \(0\.9×\) \| \*\*MISS\*\* \| \*\*MISS\*\* — 700 vs plain/);
    // Without a previous full run: the table of this run alone.
    expect(renderMarkdown(benchRun(rows), 'pnpm bench')).toContain('| target | contender | figure | verdict |\n|---|---|---|---|');
  });
});
