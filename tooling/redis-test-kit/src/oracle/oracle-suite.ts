/**
 * The cross-feature oracle as a suite every Redis adapter runs (`oracle-run.ts`): the named cases, then
 * random schedules over `distributed`, `hybrid` and `local` nodes on a Redis of the suite's own, checked
 * from the recorded history. `FLIGHT_ORACLE_SEED` replays a schedule; `FLIGHT_ORACLE_MS` sets how long the
 * random schedule runs (CI: 35 s per adapter). A failure prints its seed and the command that replays it.
 */
import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '@flight/test-servers';
import type { RedisAdapterUnderTest } from '../adapter-suite';
import { NAMED_CASES } from './named-cases';
import { randomSchedule, runOracle, type OracleReport } from './oracle-run';

const durationMs = Number(process.env.FLIGHT_ORACLE_MS ?? 35_000);

export function registerOracleSuite(adapter: Pick<RedisAdapterUnderTest, 'name' | 'kind' | 'coordinator'>): void {
  describe(`${adapter.name}: the cross-feature oracle (forget × stale × L1 × hybrid outages × per-call options)`, () => {
    let redis: RedisServer;
    beforeAll(async () => {
      redis = await startRedisServer();
    });
    afterAll(async () => {
      await redis?.stop();
    });
    const project = `redis-${adapter.kind === 'ioredis' ? 'ioredis' : 'node'}`;
    const report = (name: string, result: OracleReport) => {
      console.log(`[oracle] ${JSON.stringify({ adapter: adapter.kind, name, ...result, violations: result.violations.length })}`);
      for (const violation of result.violations.slice(0, 10)) console.log(`[oracle] ${violation.rule}: ${violation.detail}`);
    };

    for (const [name, schedule] of Object.entries(NAMED_CASES)) {
      it(`named case: ${name}`, async () => {
        const result = await runOracle(
          adapter,
          { durationMs: 0, redisUrl: redis.url, prefix: `oracle-case-${randomInt(2 ** 31)}` },
          schedule,
        );
        report(name, result);
        expect(result.violations).toEqual([]);
      }, 60_000);
    }

    const seed = Number(process.env.FLIGHT_ORACLE_SEED ?? randomInt(2 ** 31));
    it(
      `seed ${seed}: a random schedule keeps every rule`,
      async () => {
        const options = { durationMs, redisUrl: redis.url, prefix: `oracle-${seed}` };
        const result = await runOracle(adapter, options, randomSchedule(seed, durationMs));
        report(`seed ${seed}`, result);
        const replay = `FLIGHT_ORACLE_SEED=${seed} pnpm exec vitest run --project ${project} test/oracle.test.ts`;
        expect(result.violations, `seed ${seed} broke the rules; replay with: ${replay}`).toEqual([]);
        expect(result.calls).toBeGreaterThan(50);
        expect(result.heapGrowthMb).toBeLessThan(200);
      },
      durationMs + 60_000,
    );
  });
}
