import { describe, expect, it } from 'vitest';
import { runBench } from '../src/bench.js';
import type { ResultRow } from '../src/context.js';
import { availableContenders, FLIGHT_CONTENDERS } from '../src/contenders/index.js';
import { behindOwner, chunkText, type StreamCallRecord } from '../src/scenarios/stream.js';
import { verdicts } from '../src/targets.js';

const FLIGHT = 'flight-ioredis';
const call = (role: string, startMs: number, chunkMs: number[], upstreamMs: number[] | null = null): StreamCallRecord => ({
  role,
  startMs,
  chunkMs,
  upstreamMs,
  sameSequence: true,
});

describe('stream scenario: behind the owner', () => {
  it("measures each follower against the owner of its process, else the cluster's owner", () => {
    const owner = call('owner', 0, [20, 40, 60], [19.5, 39.5, 59.5]);
    const sameProcess = call('follower', 0, [20.5, 41, 60.2]);
    const otherProcess = call('follower', 0, [22, 43, 61]);
    const b = behindOwner([[owner, sameProcess], [otherProcess]]);
    expect(b.ownerFirstChunk).toEqual([20]);
    expect(b.firstChunk).toEqual([0.5, 2]);
    expect(b.chunkLag.map((x) => Math.round(x * 10) / 10)).toEqual([1, 0.2, 3, 1]);
    // Only the follower of another process came through Redis.
    expect(b.remoteFirstChunk).toEqual([2]);
    expect(b.remoteChunkLag).toEqual([3, 1]);
  });

  it('in local mode the owner is the caller whose supplier ran (role local), one per process', () => {
    const b = behindOwner([
      [call('local', 0, [20, 40], [20, 40]), call('local', 0, [21, 42])],
      [call('local', 5, [30, 50], [30, 50]), call('local', 5, [30.5, 50.5])],
    ]);
    expect(b).toEqual({ ownerFirstChunk: [20, 25], firstChunk: [1, 0.5], chunkLag: [2, 0.5], remoteFirstChunk: [], remoteChunkLag: [] });
  });

  it('measures a naive caller behind its own upstream run; errors are left out', () => {
    const b = behindOwner([[call('naive', 0, [21, 41], [20, 40]), call('error', 0, [])]]);
    expect(b).toEqual({ ownerFirstChunk: [], firstChunk: [1], chunkLag: [1], remoteFirstChunk: [], remoteChunkLag: [] });
  });

  it('chunk i is the same text in every process, of the configured size', () => {
    expect(chunkText(7, 16)).toBe('c7:.............');
    expect(chunkText(7, 16)).toHaveLength(16);
  });
});

describe('targets: streaming herd', () => {
  const stream = (extra: Record<string, unknown>): ResultRow[] => [
    {
      scenario: 'stream',
      contender: FLIGHT,
      upstreamCalls: 1,
      p50Ms: 21,
      p99Ms: 30,
      maxMs: 31,
      upstreamCallsPerRound: [1, 1],
      incompleteSequences: 0,
      followerFirstChunkVsOwnerP50Ms: 1,
      followerFirstChunkVsOwnerP99Ms: 4,
      chunkLagP50Ms: 1,
      chunkLagP99Ms: 5,
      ...extra,
    },
  ];
  const met = (rows: ResultRow[]) =>
    verdicts(rows, [FLIGHT])
      .filter((v) => v.target.startsWith('Stream'))
      .map((v) => v.met);

  it('1 upstream call with every sequence whole; first chunk and per-chunk lag p99 ≤ 5 ms behind the owner', () => {
    expect(met(stream({}))).toEqual([true, true, true]);
    expect(met(stream({ upstreamCallsPerRound: [1, 2] }))).toEqual([false, true, true]);
    expect(met(stream({ incompleteSequences: 1 }))).toEqual([false, true, true]);
    expect(met(stream({ followerFirstChunkVsOwnerP99Ms: 5.01, chunkLagP99Ms: 5.01 }))).toEqual([true, false, false]);
    expect(met(stream({ followerFirstChunkVsOwnerP99Ms: null }))).toEqual([true, null, true]);
  });
});

describe('bench: quick streaming herd', () => {
  it('naive streams 300 upstream runs; a flight adapter 1, and every caller gets the whole sequence', async () => {
    const [flight] = await availableContenders(FLIGHT_CONTENDERS);
    expect(flight, 'a flight adapter exports its coordinator factory').toBeDefined();
    const run = await runBench({ quick: true, scenarios: ['stream'], contenders: ['naive', flight!], stream: { rounds: 1 } });

    expect(run.failed).toEqual([]);
    const naive = run.rows.find((r) => r.contender === 'naive')!;
    const ours = run.rows.find((r) => r.contender === flight)!;
    expect(naive).toMatchObject({ scenario: 'stream', upstreamCalls: 300, incompleteSequences: 0, errors: 0, redisBytesPerFlight: null });
    expect(ours).toMatchObject({
      scenario: 'stream',
      upstreamCallsPerRound: [1],
      incompleteSequences: 0,
      errors: 0,
      roles: { owner: 1, follower: 299 },
    });
    const figures = [
      'followerFirstChunkVsOwnerP99Ms',
      'chunkLagP99Ms',
      'redisBytesPerFlight',
      'redisTrafficBytesPerFlight',
      'ownerFirstChunkMs',
      'clientCpuMsPerFlight',
      'redisCpuMsPerFlight',
    ];
    for (const field of figures) {
      expect(ours[field], field).toEqual(expect.any(Number));
    }
  }, 30_000);
});
