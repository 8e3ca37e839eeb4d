import { describe, expect, it } from 'vitest';
import { httpRows, type HttpContender, type Sample } from '../src/scenarios/http.js';
import { roundOrder } from '../src/stats.js';

const sample = (reqPerSec: number, extra: Partial<Sample> = {}): Sample => ({
  reqPerSec,
  p50Ms: 1,
  p99Ms: 2,
  maxMs: 3,
  non2xx: 0,
  errors: 0,
  handlerRuns: 1,
  cpuUsPerReq: 100,
  ...extra,
});

describe('http scenario rounds', () => {
  it('rotates the order of the contenders from one round to the next', () => {
    const all = ['plain', 'flight-distributed', 'flight-local'];
    expect(roundOrder(all, 0)).toEqual(all);
    expect(roundOrder(all, 1)).toEqual(['flight-distributed', 'flight-local', 'plain']);
    expect(roundOrder(all, 2)).toEqual(['flight-local', 'plain', 'flight-distributed']);
    expect(roundOrder(all, 3)).toEqual(all);
  });

  it('gives each contender the median of its rounds and the median of its per-round ratios to plain', () => {
    const samples = new Map<HttpContender, Sample[]>([
      // Round 2 ran while the machine was slow for everyone.
      ['plain', [sample(1000, { maxMs: 9 }), sample(400), sample(1100)]],
      ['flight-local', [sample(900, { errors: 1 }), sample(380), sample(1000, { errors: 2, maxMs: 12 })]],
    ]);
    const [plain, local] = httpRows('distinct', samples, 64);
    expect(plain).toMatchObject({ scenario: 'http', urls: 'distinct', contender: 'plain', reqPerSec: 1000, vsPlain: 1 });
    // Ratios 0.9, 0.95, 0.909: median 0.909; the ratio of the medians would be 0.9.
    expect(local).toMatchObject({ contender: 'flight-local', reqPerSec: 900, vsPlain: 0.91, roundReqPerSec: [900, 380, 1000] });
    expect(local).toMatchObject({ errors: 3, maxMs: 12, connections: 64 });
    expect(local).not.toHaveProperty('handlerRunsPerBurst');
  });

  it("gives the middleware's rows the median of their per-round ratios to the Redis response cache", () => {
    const samples = new Map<HttpContender, Sample[]>([
      ['plain', [sample(1000), sample(1000), sample(1000)]],
      ['redis-cache', [sample(800), sample(400), sample(1000)]],
      ['flight-distributed', [sample(600), sample(360), sample(900)]],
    ]);
    const [plain, cache, distributed] = httpRows('distinct', samples, 64);
    // Ratios to the cache 0.75, 0.9, 0.9: median 0.9; the ratio of the medians would be 0.75.
    expect(distributed).toMatchObject({ contender: 'flight-distributed', vsPlain: 0.6, vsRedisCache: 0.9 });
    expect(cache).toMatchObject({ contender: 'redis-cache', vsPlain: 0.8 });
    expect(cache).not.toHaveProperty('vsRedisCache');
    expect(plain).not.toHaveProperty('vsRedisCache');
  });

  it('counts handler runs per burst on one URL', () => {
    const samples = new Map<HttpContender, Sample[]>([
      ['plain', [sample(1000, { handlerRuns: 5000 })]],
      ['flight-distributed', [sample(1100, { handlerRuns: 1 })]],
    ]);
    const [, distributed] = httpRows('same', samples, 64);
    expect(distributed).toMatchObject({ handlerRunsPerBurst: 1, vsPlain: 1.1 });
  });
});
