import { describe, expect, it } from 'vitest';
import { combineRounds } from '../src/scenarios/throughput.js';

const round = (ops: number, cpu: number, redis: number | null, latencies: number[]) => ({
  ops,
  latencies,
  errors: 1,
  upstreamCalls: 10,
  flights: 10,
  clientCpuPct: 90,
  redisCpuPct: redis === null ? null : 40,
  clientCpuUsPerFlight: cpu,
  redisCpuUsPerFlight: redis,
});

describe('combineRounds', () => {
  it('takes the median of each per-round figure and keeps every latency and count', () => {
    const m = combineRounds([round(9000, 70, 20, [1, 2]), round(20000, 40, 12, [3]), round(15000, 50, 30, [4])]);
    expect(m.ops).toBe(15000);
    expect(m.clientCpuUsPerFlight).toBe(50);
    expect(m.redisCpuUsPerFlight).toBe(20);
    expect(m.roundOps).toEqual([9000, 20000, 15000]);
    expect(m.latencies).toEqual([1, 2, 3, 4]);
    expect(m.errors).toBe(3);
    expect(m.flights).toBe(30);
  });

  it('averages the middle two of an even count and leaves a figure nobody measured null', () => {
    const m = combineRounds([round(10000, 60, null, []), round(14000, 40, null, [])]);
    expect(m.ops).toBe(12000);
    expect(m.clientCpuUsPerFlight).toBe(50);
    expect(m.redisCpuUsPerFlight).toBeNull();
    expect(m.redisCpuPct).toBeNull();
  });
});
