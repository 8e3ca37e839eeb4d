import { describe, expect, it } from 'vitest';
import { guarded, type BenchContext, type ResultRow } from '../src/context.js';
import { compareRows, HOP_ACROSS_CONTENDER, HOP_CONTENDER, verdicts, type Verdict } from '../src/targets.js';

const row = (scenario: string, contender: string, extra: Record<string, unknown> = {}): ResultRow => ({
  scenario,
  contender,
  upstreamCalls: null,
  p50Ms: null,
  p99Ms: null,
  maxMs: null,
  ...extra,
});

const FLIGHT = 'flight-ioredis';
const find = (vs: Verdict[], prefix: string, contender = FLIGHT) =>
  vs.find((v) => v.target.startsWith(prefix) && v.contender === contender);
const met = (rows: ResultRow[], prefix: string, contender = FLIGHT) => find(verdicts(rows, [FLIGHT]), prefix, contender)?.met;

const distinct = (flight: Record<string, unknown>) => [
  row('distinct-keys', 'raw-evalsha', { opsPerSec: 400_000 }),
  row('distinct-keys', 'naive', { opsPerSec: 1_000_000 }),
  row('distinct-keys', 'local', { opsPerSec: 200_000 }),
  row('distinct-keys', 'redlock', { opsPerSec: 20_000, redisCpuUsPerFlight: 30 }),
  row('distinct-keys', 'bentocache', { opsPerSec: 25_000, redisCpuUsPerFlight: 15 }),
  row('distinct-keys', 'cache-manager', { opsPerSec: 30_000, redisCpuUsPerFlight: 20, clientCpuUsPerFlight: 50 }),
  row('distinct-keys', FLIGHT, { roundTrips: 2, followerRoundTrips: 1, followerSubscriptionCommands: 2, ...flight }),
];

describe('targets: distinct keys', () => {
  it('compares each flight adapter with the best of cache-manager, bentocache and redlock in the same run', () => {
    const rows = compareRows(distinct({ opsPerSec: 30_000, redisCpuUsPerFlight: 30, clientCpuUsPerFlight: 50 }));
    const ours = rows.find((r) => r.contender === FLIGHT)!;
    expect(ours).toMatchObject({
      bestPeer: 'cache-manager',
      bestPeerOpsPerSec: 30_000,
      vsBestPeer: 1,
      redisCpuVsCacheManager: 1.5,
      clientCpuVsCacheManager: 1,
    });
    expect(met(rows, 'Distinct keys')).toBe(true);
    expect(met(rows, 'Redis CPU per owner flight')).toBe(true);
    expect(met(rows, 'client CPU per owner flight')).toBe(true);
    const slower = distinct({ opsPerSec: 29_999, redisCpuUsPerFlight: 30.1, clientCpuUsPerFlight: 50.1 });
    expect(met(slower, 'Distinct keys')).toBe(false);
    expect(met(slower, 'Redis CPU per owner flight ≤ 1.5×')).toBe(false);
    expect(met(slower, 'client CPU per owner flight ≤ 1×')).toBe(false);
  });

  it('is not measured (n/a) when no peer ran', () => {
    const rows = [row('distinct-keys', FLIGHT, { opsPerSec: 10_000, redisCpuUsPerFlight: 10, roundTrips: 2, followerRoundTrips: 1 })];
    expect(met(rows, 'Distinct keys')).toBeNull();
    expect(met(rows, 'Redis CPU per owner flight')).toBeNull();
    expect(met(rows, 'Owner round trips')).toBe(true);
  });

  it('owner ≤ 2 round trips; follower 1 round trip, the (un)subscription counted apart', () => {
    expect(met(distinct({ opsPerSec: 1 }), 'Owner round trips')).toBe(true);
    expect(met(distinct({ opsPerSec: 1, roundTrips: 3 }), 'Owner round trips')).toBe(false);
    expect(met(distinct({ opsPerSec: 1 }), 'Follower round trips')).toBe(true);
    expect(met(distinct({ opsPerSec: 1, followerRoundTrips: 2 }), 'Follower round trips')).toBe(false);
  });

  it('on Valkey: compares with the peers measured on that server only, and says why when no valkey-server ran', () => {
    const valkey = (scenarioRows: ResultRow[]) =>
      scenarioRows.map((r) => ({ ...r, scenario: 'distinct-keys-valkey', server: 'valkey 8.1.1' }));
    // On the run's Redis we trail cache-manager; on Valkey we lead it: each scenario has its own best peer.
    const rows = [
      ...distinct({ opsPerSec: 20_000, redisCpuUsPerFlight: 20 }),
      ...valkey(distinct({ opsPerSec: 31_000, redisCpuUsPerFlight: 8 })),
    ];
    const vs = verdicts(rows, [FLIGHT]);
    expect(find(vs, 'Distinct keys:')?.met).toBe(false);
    expect(find(vs, 'Distinct keys on valkey 8.1.1 (`SET … IFEQ`): ops/s')).toMatchObject({ met: true });
    // Where `SET … IFEQ` exists the owner path needs no script: Redis CPU ≤ 1× cache-manager's (20 µs here).
    expect(find(vs, 'Distinct keys on valkey 8.1.1 (`SET … IFEQ`): Redis CPU per owner flight ≤ 1×')).toMatchObject({
      met: true,
      figure: '8 µs vs 20 µs (0.4×)',
    });
    const heavier = verdicts([...valkey(distinct({ opsPerSec: 31_000, redisCpuUsPerFlight: 21 }))], [FLIGHT]);
    expect(find(heavier, 'Distinct keys on valkey 8.1.1 (`SET … IFEQ`): Redis CPU')?.met).toBe(false);
    const compared = compareRows(rows).find((r) => r.scenario === 'distinct-keys-valkey' && r.contender === FLIGHT)!;
    expect(compared).toMatchObject({ bestPeer: 'cache-manager', bestPeerOpsPerSec: 30_000, vsBestPeer: 1.033 });

    const skipped = [row('distinct-keys-valkey', FLIGHT, { kind: 'skipped', reason: 'no valkey-server >= 8.1 found' })];
    expect(find(verdicts(skipped, [FLIGHT]), 'Distinct keys on Valkey')).toMatchObject({
      met: null,
      figure: 'not measured: no valkey-server >= 8.1 found',
    });
  });

  it('local mode ≥ 15 % of naive', () => {
    const rows = distinct({ opsPerSec: 1 });
    expect(met(rows, 'Local mode', 'local')).toBe(true); // 20 %
    rows.find((r) => r.contender === 'local')!.opsPerSec = 149_999;
    expect(met(rows, 'Local mode', 'local')).toBe(false);
    expect(compareRows(rows).find((r) => r.contender === 'local')!.pctOfNaive).toBe(15);
  });
});

describe('targets: footprint, herd, wake-up', () => {
  const footprint = (ours1k: number, ours100k: number) => [
    row('footprint', 'bentocache', { resultBytes: 1024, bytesPerFlight: 1400, leftoverKeys: 0 }),
    row('footprint', 'bentocache', { resultBytes: 102_400, bytesPerFlight: 114_000, leftoverKeys: 0 }),
    row('footprint', FLIGHT, { resultBytes: 1024, bytesPerFlight: ours1k, leftoverKeys: 0 }),
    row('footprint', FLIGHT, { resultBytes: 102_400, bytesPerFlight: ours100k, leftoverKeys: 0 }),
  ];

  it('1 KB ≤ 1.5× bentocache, 100 KB below bentocache', () => {
    expect(met(footprint(2100, 60_000), 'Footprint, 1 KB')).toBe(true);
    expect(met(footprint(2101, 60_000), 'Footprint, 1 KB')).toBe(false);
    expect(met(footprint(2100, 113_999), 'Footprint, 100 KB')).toBe(true);
    expect(met(footprint(2100, 114_000), 'Footprint, 100 KB')).toBe(false);
    expect(met(footprint(2100, 60_000), 'Keys left')).toBe(true);
  });

  const herd = (perRound: number[], p99: number) => [
    row('herd', 'naive', { p99Ms: 103 }),
    row('herd', FLIGHT, { p99Ms: p99, upstreamCallsPerRound: perRound }),
  ];

  it('herd: exactly 1 upstream call in every round, p99 ≤ naive p99 + 5 ms', () => {
    expect(met(herd([1, 1], 108), 'Herd: exactly 1')).toBe(true);
    expect(met(herd([1, 2], 108), 'Herd: exactly 1')).toBe(false);
    expect(met(herd([1, 1], 108), 'Herd: p99')).toBe(true);
    expect(met(herd([1, 1], 108.01), 'Herd: p99')).toBe(false);
  });

  it('wake-up p50 ≤ 2× the bare PUBLISH→SUBSCRIBE hop to another process of the same run, p99 and the in-process hop beside it', () => {
    const rows = (p50: number) => [
      row('wakeup', HOP_CONTENDER, { p50Ms: 0.05, p99Ms: 0.2 }),
      row('wakeup', HOP_ACROSS_CONTENDER, { p50Ms: 0.1, p99Ms: 0.3 }),
      row('wakeup', FLIGHT, { p50Ms: p50, p99Ms: 1.2 }),
    ];
    expect(met(rows(0.2), 'Wake-up')).toBe(true);
    expect(met(rows(0.21), 'Wake-up')).toBe(false);
    const figure = find(verdicts(rows(0.2), [FLIGHT]), 'Wake-up')!.figure;
    expect(figure).toContain('p99 1.2 ms vs hop 0.3 ms');
    expect(figure).toContain('in-process hop p50 0.05 ms (4×)');
    // Only the in-process hop measured: no verdict rather than one against the wrong reference.
    expect(met([rows(0.2)[0]!, rows(0.2)[2]!], 'Wake-up')).toBeNull();
    expect(met([row('wakeup', FLIGHT, { p50Ms: 0.2 })], 'Wake-up')).toBeNull();
    const [flight] = compareRows(rows(0.2)).filter((r) => r.contender === FLIGHT);
    expect({ vsHopP50: flight!.vsHopP50, vsInProcessHopP50: flight!.vsInProcessHopP50 }).toEqual({ vsHopP50: 2, vsInProcessHopP50: 4 });
  });
});

describe('targets: HTTP (rows of the http scenario)', () => {
  const http = (urls: string, contender: string, reqPerSec: number, extra: Record<string, unknown> = {}) =>
    row('http', contender, { urls, reqPerSec, ...extra });
  const rows = (distributed: number, local: number, same: number, runs: number) => [
    http('distinct', 'plain', 1000),
    http('distinct', 'flight-distributed', distributed),
    http('distinct', 'flight-local', local),
    http('same', 'plain', 1000),
    http('same', 'flight-distributed', same, { handlerRunsPerBurst: runs }),
  ];

  it('distinct URLs: distributed ≥ 0.8× and local ≥ 0.95× plain; one URL: ≥ 1× plain with 1 handler run per burst', () => {
    const ok = verdicts(rows(800, 950, 1000, 1), []);
    expect(ok.map((v) => [v.contender, v.met])).toEqual([
      ['flight-distributed', true],
      ['flight-local', true],
      ['flight-distributed', true],
    ]);
    expect(verdicts(rows(799, 949, 1000, 2), []).map((v) => v.met)).toEqual([false, false, false]);
    expect(verdicts(rows(800, 950, 999, 1), []).map((v) => v.met)).toEqual([true, true, false]);
  });

  it("judges by the row's median of per-round ratios to plain when it has one, not by the ratio of the medians", () => {
    // Medians alone say 0.75× (750 / 1000), but in each round the route ran at ≥ 0.95× the plain route beside it.
    const judged = [
      http('distinct', 'plain', 1000),
      http('distinct', 'flight-local', 750, { vsPlain: 0.96, roundReqPerSec: [700, 750, 900] }),
    ];
    const [local] = verdicts(judged, []);
    expect(local).toMatchObject({ contender: 'flight-local', met: true });
    expect(local!.figure).toContain('0.96×; rounds 700 / 750 / 900');
    const below = [http('distinct', 'plain', 1000), http('distinct', 'flight-local', 950, { vsPlain: 0.85 })];
    expect(verdicts(below, [])[0]!.met).toBe(false);
  });

  it('distinct URLs: distributed ≥ 1× the Redis response cache, by the median of per-round ratios when the row has it', () => {
    const beside = (distributed: number, extra: Record<string, unknown> = {}) =>
      verdicts([http('distinct', 'redis-cache', 1000), http('distinct', 'flight-distributed', distributed, extra)], []).filter((v) =>
        v.target.includes('Redis response cache'),
      );
    expect(beside(1000).map((v) => [v.contender, v.met])).toEqual([['flight-distributed', true]]);
    expect(beside(999)[0]!.met).toBe(false);
    expect(beside(700, { vsRedisCache: 1.02 })[0]).toMatchObject({ met: true, figure: expect.stringContaining('(1.02×)') });
    // No cache row in the run: no verdict.
    expect(verdicts([http('distinct', 'flight-distributed', 900)], []).filter((v) => v.target.includes('Redis response cache'))).toEqual(
      [],
    );
  });
});

describe('targets: model calls (rows of the openai and ai-sdk scenarios)', () => {
  const model = (scenario: string, overFloorP50Ms: number, perRound = [1, 1]) => [
    row(scenario, FLIGHT, { upstreamCallsPerRound: perRound, overFloorP50Ms, overheadP50Ms: overFloorP50Ms + 0.2 }),
  ];
  it('each wrapper: 1 upstream call per herd, and an uncontended call ≤ the floor + 0.15 ms', () => {
    for (const [scenario, wrapper] of [
      ['openai', '@flight/openai'],
      ['ai-sdk', '@flight/ai-sdk'],
    ] as const) {
      expect(met(model(scenario, 0.15), `Model calls (${wrapper})`)).toBe(true);
      expect(met(model(scenario, 0.16), `Model calls (${wrapper})`)).toBe(false);
      expect(met(model(scenario, 0.1, [1, 2]), `Model calls (${wrapper})`)).toBe(false);
    }
  });
});

describe('targets: a contender that could not run', () => {
  it('is a MISS with the reason, not a verdict on missing figures', () => {
    const failed = { kind: 'failed', reason: 'connect ECONNREFUSED' };
    const vs = verdicts([row('distinct-keys', 'bentocache', { opsPerSec: 1 }), row('distinct-keys', FLIGHT, failed)], [FLIGHT]);
    expect(vs).toEqual([
      expect.objectContaining({ target: 'distinct-keys: measured', met: false, figure: 'failed: connect ECONNREFUSED' }),
    ]);
  });
});

describe('targets: fan-out', () => {
  const proc = (i: number, own: number, extra: Record<string, unknown>) =>
    row('fan-out', FLIGHT, { topology: 'standalone', kind: 'process', process: i, ownFlights: own, ...extra });

  it("reads the coordinator's counters, falls back to the harness's observation, n/a without either", () => {
    const counters = [proc(0, 5, { foreignNotices: 0, subscriberBytes: 500 }), proc(1, 10, { foreignNotices: 0, subscriberBytes: 1000 })];
    expect(met(counters, 'Fan-out (standalone): foreign')).toBe(true);
    expect(met(counters, 'Fan-out (standalone): subscriber bytes')).toBe(true);
    const observed = [
      proc(0, 5, { observedForeignNotices: 95, observedSubscriberBytes: 150_000 }),
      proc(1, 10, { observedForeignNotices: 90, observedSubscriberBytes: 150_000 }),
    ];
    expect(met(observed, 'Fan-out (standalone): foreign')).toBe(false);
    expect(met(observed, 'Fan-out (standalone): subscriber bytes')).toBe(false); // 2× spread: not proportional
    expect(met([proc(0, 5, {})], 'Fan-out (standalone): foreign')).toBeNull();
  });

  it('cluster: MISS when a notice crossed the cluster bus or a master published what it does not own', () => {
    const master = (port: number, extra: Record<string, unknown>) =>
      row('fan-out', FLIGHT, {
        topology: 'cluster',
        kind: 'master',
        port,
        flightsOwned: 10,
        noticesPublished: 10,
        busPublishReceived: 0,
        shardChannelsOfOtherSlots: 0,
        ...extra,
      });
    expect(met([master(1, {}), master(2, {})], 'Fan-out (cluster): each notice')).toBe(true);
    expect(met([master(1, {}), master(2, { busPublishReceived: 10 })], 'Fan-out (cluster): each notice')).toBe(false);
    expect(met([master(1, {}), master(2, { noticesPublished: 9 })], 'Fan-out (cluster): each notice')).toBe(false);
    expect(met([master(1, {}), master(2, { shardChannelsOfOtherSlots: 1 })], 'Fan-out (cluster): each notice')).toBe(false);
    const skipped = verdicts([row('fan-out', FLIGHT, { topology: 'cluster', kind: 'skipped', reason: 'no redis-server' })], [FLIGHT]);
    expect(skipped).toEqual([expect.objectContaining({ target: 'Fan-out (cluster)', met: null, figure: 'not measured: no redis-server' })]);
  });
});

describe('guarded: one contender failing does not end the scenario', () => {
  it('turns a throw into a failed row and reports it', async () => {
    const rows: ResultRow[] = [];
    const logs: string[] = [];
    const ctx = { workers: [], log: (m: string) => logs.push(m) } as unknown as BenchContext;
    expect(await guarded(ctx, rows, 'herd', 'cache-manager', async () => Promise.reject(new Error('no Redis\nstack')))).toBe(false);
    expect(await guarded(ctx, rows, 'herd', 'naive', async () => void rows.push(row('herd', 'naive')))).toBe(true);
    expect(rows).toEqual([
      expect.objectContaining({ scenario: 'herd', contender: 'cache-manager', kind: 'failed', reason: 'no Redis' }),
      expect.objectContaining({ contender: 'naive' }),
    ]);
    expect(logs).toEqual(['herd cache-manager FAILED: no Redis']);
  });
});
