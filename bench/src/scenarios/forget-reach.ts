/**
 * Scenario 10 — forget reaching other nodes' L1: four nodes (single-flights, each with its own
 * coordinator and connections, in the harness process). Nodes B and C read each flight until they serve it
 * from L1; node D never reads it. Node A forgets the flight; a sample is the time from A's `forget`
 * resolving to B's and C's `forgotten` event (their L1 copy dropped), on the machine's monotonic clock (0
 * when it came first). D's notices count what a node without a copy receives (the target: nothing).
 */
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { createSingleFlight, type SingleFlight } from '@flight/core';
import { prefixOf, type BenchContext, type ResultRow } from '../context.js';
import { FLIGHT_CONTENDERS, loadFlightFactory, type ContenderName } from '../contenders/index.js';
import { nowMs, sleep, summarize } from '../stats.js';

export interface ForgetReachOptions {
  flights: number;
}

export function forgetReachOptions(quick: boolean): ForgetReachOptions {
  return { flights: quick ? 20 : 100 };
}

interface Node {
  flight: SingleFlight;
  coordinator: { close(): Promise<void>; notifications?: { received: number } };
  close(): Promise<void>;
}

async function startNode(name: ContenderName, url: string, prefix: string, nodeId: string): Promise<Node> {
  const factory = await loadFlightFactory(name);
  if (!factory) throw new Error(`${name} is not available`);
  let client: { quit?(): Promise<unknown>; close?(): Promise<unknown>; disconnect?(): void };
  if (name === 'flight-ioredis') client = new Redis(url);
  else {
    const nodeRedis = createClient({ url });
    await nodeRedis.connect();
    client = nodeRedis;
  }
  const coordinator = factory({ client, prefix });
  const flight = createSingleFlight({
    coordinator,
    mode: 'distributed',
    nodeId,
    telemetry: false,
    defaults: { l1: { enabled: true, ttlMs: 60_000 }, guard: { retry: false, circuitBreaker: false, bulkhead: false, timeoutMs: 0 } },
  });
  return {
    flight,
    coordinator,
    async close() {
      await flight.close();
      await coordinator.close();
      if (client.close) await client.close();
      else await client.quit?.();
    },
  };
}

async function runOne(ctx: BenchContext, name: ContenderName, opts: ForgetReachOptions): Promise<ResultRow> {
  const prefix = prefixOf(ctx, 'forget-reach', name);
  const nodes = await Promise.all(['a', 'b', 'c', 'd'].map((id) => startNode(name, ctx.redis.url, prefix, id)));
  const [a, b, c, d] = nodes as [Node, Node, Node, Node];
  const heard = new Map<string, number[]>();
  for (const node of [b, c]) node.flight.on('forgotten', (e) => heard.set(e.key, [...(heard.get(e.key) ?? []), nowMs()]));
  const samples: number[] = [];
  let stale = 0;
  let missed = 0;
  try {
    for (let i = 0; i < opts.flights; i++) {
      const key = `k${i}`;
      await a.flight.execute('reach', key, () => `old-${i}`);
      for (const node of [b, c]) {
        for (let n = 0; n < 20; n++) {
          if ((await node.flight.execute('reach', key, () => 'unexpected')).role === 'l1') break;
          await sleep(5);
        }
      }
      await a.flight.forget('reach', key);
      const resolved = nowMs();
      await sleep(10);
      for (const node of [b, c]) {
        if ((await node.flight.execute('reach', key, () => `new-${i}`)).value === `old-${i}`) stale++;
      }
      const times = heard.get(key) ?? [];
      if (times.length < 2) missed++;
      for (const at of times) samples.push(Math.max(0, at - resolved));
    }
  } finally {
    await Promise.all(nodes.map((node) => node.close()));
  }
  const s = summarize(samples);
  return {
    scenario: 'forget-reach',
    contender: name,
    upstreamCalls: null,
    flights: opts.flights,
    samples: s.count,
    p50Ms: s.p50Ms,
    p99Ms: s.p99Ms,
    maxMs: s.maxMs,
    staleReads: stale,
    notHeard: missed,
    noticesAtNodeWithoutCopy: d.coordinator.notifications?.received ?? null,
  };
}

export async function runForgetReach(
  ctx: BenchContext,
  contenders: readonly ContenderName[],
  opts: ForgetReachOptions,
): Promise<ResultRow[]> {
  const rows: ResultRow[] = [];
  for (const name of FLIGHT_CONTENDERS.filter((c) => contenders.includes(c))) {
    ctx.log(`forget-reach: ${name}`);
    rows.push(await runOne(ctx, name, opts));
  }
  return rows;
}
