/**
 * Scenario 14 — what replica acknowledgement costs an uncontended call: a primary and its replica of the
 * scenario's own (two redis-servers on free ports, loopback), and calls of `execute` on a new key each (the
 * supplier answers at once), one after another, on each Redis adapter in three settings: no `waitReplicas`,
 * `waitReplicas` (a `WAIT` after each owner write; the write counts anyway), and strict acknowledgement
 * (`unacknowledged: 'retry'`: taking ownership counts once the replica has it). The settings take turns call by
 * call, so a drift of the machine lands on all of them; the cost is each setting's time per call minus the
 * time without `WAIT` in the same run.
 */
import { randomUUID } from 'node:crypto';
import { createSingleFlight, type SingleFlight } from '@flight/core';
import { createIoredisCoordinator } from '@flight/redis-ioredis';
import { createNodeRedisCoordinator } from '@flight/redis-node';
import { replicaInSync, startRedisServer } from '@flight/test-servers';
import type { BenchContext, ResultRow } from '../context.js';
import { nowMs, round, summarize } from '../stats.js';

export interface ReplicaAckOptions {
  /** Measured calls per adapter and setting. */
  calls: number;
}

export function replicaAckOptions(quick: boolean): ReplicaAckOptions {
  return { calls: quick ? 300 : 2000 };
}

const WARM_UP_CALLS = 50;
const SETTINGS = {
  'no WAIT': undefined,
  waitReplicas: { replicas: 1, timeoutMs: 1000 },
  'strict (retry)': { replicas: 1, timeoutMs: 1000, unacknowledged: 'retry' },
} as const;
type Setting = keyof typeof SETTINGS;

/** A SingleFlight of `setting` on its own coordinator (closed by `close`). */
function flightOf(
  adapter: 'ioredis' | 'node-redis',
  url: string,
  setting: Setting,
  prefix: string,
): SingleFlight & { closeAll(): Promise<void> } {
  const waitReplicas = SETTINGS[setting];
  const options = { prefix, ...(waitReplicas ? { waitReplicas } : {}) };
  const coordinator =
    adapter === 'ioredis'
      ? createIoredisCoordinator({ redis: url, ...options })
      : createNodeRedisCoordinator({ redis: { url }, ...options });
  const flight = createSingleFlight({
    coordinator,
    mode: 'distributed',
    nodeId: `bench-${setting}`,
    defaults: { l1: { enabled: false }, guard: { retry: false, timeoutMs: 0, circuitBreaker: false, bulkhead: false } },
  });
  return Object.assign(flight, { closeAll: () => flight.close().then(() => coordinator.close()) });
}

export async function runReplicaAck(ctx: BenchContext, opts: ReplicaAckOptions): Promise<ResultRow[]> {
  const primary = await startRedisServer();
  const replica = await startRedisServer({ args: ['--replicaof', '127.0.0.1', String(primary.port)] });
  const rows: ResultRow[] = [];
  try {
    await replicaInSync(replica.port);
    for (const adapter of ['ioredis', 'node-redis'] as const) {
      const settings = Object.keys(SETTINGS) as Setting[];
      const flights = settings.map((s) => flightOf(adapter, primary.url, s, `bench-ack-${ctx.runId}`));
      const samples: number[][] = settings.map(() => []);
      try {
        for (let i = -WARM_UP_CALLS; i < opts.calls; i++) {
          for (let j = 0; j < settings.length; j++) {
            // Rotated per call, so no setting always follows the same one.
            const k = (((i + j) % settings.length) + settings.length) % settings.length;
            const started = nowMs();
            await flights[k]!.execute('ack', randomUUID(), () => 'v');
            if (i >= 0) samples[k]!.push(nowMs() - started);
          }
        }
      } finally {
        await Promise.all(flights.map((f) => f.closeAll()));
      }
      const base = summarize(samples[0]!);
      settings.forEach((setting, k) => {
        const s = summarize(samples[k]!);
        rows.push({
          scenario: 'replica-ack',
          contender: `flight-${adapter}`,
          setting,
          upstreamCalls: null,
          p50Ms: s.p50Ms,
          p99Ms: s.p99Ms,
          maxMs: s.maxMs,
          overNoWaitP50Ms: k === 0 || s.p50Ms === null || base.p50Ms === null ? null : round(s.p50Ms - base.p50Ms),
          calls: samples[k]!.length,
        });
      });
      ctx.log(`replica-ack ${adapter} done`);
    }
  } finally {
    await replica.stop();
    await primary.stop();
  }
  return rows;
}
