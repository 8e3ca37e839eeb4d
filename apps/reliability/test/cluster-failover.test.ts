/**
 * #12 Redis Cluster: a master killed (SIGKILL) in a local 3 masters + 3 replicas cluster. Requests keep
 * flowing over many keys (every slot range); during the failover window they get typed errors, then
 * service is normal again, and no caller ever gets a wrong value.
 */
import { FlightError } from '@flight/core';
import { createIoredisCoordinator } from '@flight/redis-ioredis';
import { startRedisCluster, type RedisCluster } from '@flight/test-servers';
import { createSingleFlight } from '@flight/core';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectedValue, FAST_POLICY, recordFigure, sleep, trackUnhandledRejections } from '../src/index.js';

let cluster: RedisCluster;
beforeAll(async () => {
  cluster = await startRedisCluster({ masters: 3, replicas: 1 });
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});

describe('#12 Redis Cluster failover', () => {
  it('a killed master: typed errors during the failover window, then normal service, no wrong result', async () => {
    const unhandled = trackUnhandledRejections();
    const client = new Cluster(cluster.masters, { clusterRetryStrategy: () => 100, redisOptions: { maxRetriesPerRequest: 1 } });
    client.on('error', () => undefined);
    const coordinator = createIoredisCoordinator({ client, prefix: 'fo', commandTimeoutMs: 500 });
    const flight = createSingleFlight({ coordinator, mode: 'distributed', nodeId: 'n', defaults: FAST_POLICY });
    let upstream = 0;
    const outcomes: { at: number; ok: boolean; wrong: boolean; code?: string }[] = [];
    try {
      const started = Date.now();
      let killedAt = 0;
      let seq = 0;
      const victim = cluster.nodes[0]!;
      const loop = async () => {
        while (Date.now() - started < 9000) {
          const key = `k-${seq++}`;
          try {
            const r = await flight.execute('fo', key, async () => {
              upstream++;
              return expectedValue(key);
            });
            outcomes.push({ at: Date.now(), ok: true, wrong: r.value !== expectedValue(key) });
          } catch (error) {
            outcomes.push({
              at: Date.now(),
              ok: false,
              wrong: false,
              code: error instanceof FlightError ? error.code : `untyped:${String(error)}`,
            });
          }
          await sleep(10);
        }
      };
      const killer = (async () => {
        await sleep(1500);
        killedAt = Date.now();
        process.kill(victim.pid, 'SIGKILL');
      })();
      await Promise.all([loop(), loop(), loop(), killer]);
      const errors = outcomes.filter((o) => !o.ok);
      const firstError = errors[0]?.at ?? killedAt;
      const lastError = errors.at(-1)?.at ?? killedAt;
      const tail = outcomes.filter((o) => o.at > lastError);
      const byCode: Record<string, number> = {};
      for (const e of errors) byCode[e.code!] = (byCode[e.code!] ?? 0) + 1;
      expect(outcomes.filter((o) => o.wrong)).toEqual([]);
      expect(errors.filter((e) => e.code!.startsWith('untyped'))).toEqual([]);
      // Normal again: the last error is well before the end, and everything after it succeeded.
      expect(Date.now() - lastError).toBeGreaterThan(1500);
      expect(tail.length).toBeGreaterThan(20);
      expect(tail.every((o) => o.ok)).toBe(true);
      expect(unhandled.errors).toEqual([]);
      recordFigure('#12 cluster master killed (3+3)', {
        requests: outcomes.length,
        answered: outcomes.filter((o) => o.ok).length,
        wrong: 0,
        typedErrors: byCode,
        errorWindowMs: errors.length ? lastError - killedAt : 0,
        firstErrorAfterKillMs: errors.length ? firstError - killedAt : 0,
        upstreamCalls: upstream,
        okAfterWindow: tail.length,
      });
    } finally {
      unhandled.dispose();
      await flight.close();
      await coordinator.close();
      client.disconnect();
    }
  });
});
