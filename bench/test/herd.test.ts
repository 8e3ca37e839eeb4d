import { describe, expect, it } from 'vitest';
import { runBench } from '../src/bench.js';
import { availableContenders, FLIGHT_CONTENDERS } from '../src/contenders/index.js';

describe('bench: quick herd', () => {
  it('reports the result shape, and flight makes exactly one upstream call for 3 processes x 100 callers', async () => {
    const [flight] = await availableContenders(FLIGHT_CONTENDERS);
    expect(flight, 'a flight adapter exports its coordinator factory').toBeDefined();
    const run = await runBench({ quick: true, scenarios: ['herd'], contenders: ['local', flight!], herd: { rounds: 1 } });

    expect(run.rows.map((r) => r.contender)).toEqual(['local', flight]);
    for (const row of run.rows) {
      expect(row).toMatchObject({ scenario: 'herd', callers: 300, errors: 0 });
      for (const field of ['upstreamCalls', 'p50Ms', 'p99Ms', 'maxMs'] as const) expect(row[field]).toEqual(expect.any(Number));
      expect(row.p50Ms!).toBeLessThanOrEqual(row.p99Ms!);
      expect(row.p99Ms!).toBeLessThanOrEqual(row.maxMs!);
      expect(row.p50Ms!).toBeGreaterThanOrEqual(100); // every caller waits for the 100 ms upstream
    }
    const local = run.rows.find((r) => r.contender === 'local')!;
    const ours = run.rows.find((r) => r.contender === flight)!;
    expect(local.upstreamCalls).toBe(3); // one per process
    expect(ours.upstreamCallsPerRound).toEqual([1]);
  }, 20_000);
});
