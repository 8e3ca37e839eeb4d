/**
 * Where an uncontended @flight/openai call's time goes, against the bare SDK call: from the call to the SDK's
 * fetch, the fetch itself, and from the fetch's answer to the caller's. One node, the fake model in-process.
 * The floor is the bare call after one `SET … NX PX … GET` (its "to fetch" includes that round trip).
 * `cd bench && [GAP=3] node --conditions=@flight/source --import tsx profiles/openai-phases.ts` (GAP: ms idle
 * before each call, as the bench's scenario 11 gives them)
 */
import { randomUUID } from 'node:crypto';
import { createSingleFlight } from '@flight/core';
import { startFakeModel } from '@flight/fake-model';
import { withFlights } from '@flight/openai';
import { createIoredisCoordinator } from '@flight/redis-ioredis';
import { Redis } from 'ioredis';
import OpenAI from 'openai';

const N = Number(process.env.N ?? 600);
const GAP = Number(process.env.GAP ?? 0);
const model = await startFakeModel({ port: 0, latencyMs: 1 });
const marks = { fetchAt: 0, fetchedAt: 0, acquireAt: 0, acquiredAt: 0 };
const fetch: typeof globalThis.fetch = async (url, init) => {
  marks.fetchAt = performance.now();
  const response = await globalThis.fetch(url, init);
  marks.fetchedAt = performance.now();
  return response;
};
const sdk = () => new OpenAI({ baseURL: `${model.url}/v1`, apiKey: 'sk-bench', maxRetries: 0, fetch });
const coordinator = createIoredisCoordinator({
  redis: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  prefix: `phases-${randomUUID()}`,
});
const acquire = coordinator.acquire.bind(coordinator);
coordinator.acquire = async (input) => {
  marks.acquireAt = performance.now();
  const reply = await acquire(input);
  marks.acquiredAt = performance.now();
  return reply;
};
const flights = createSingleFlight({
  coordinator,
  defaults: { l1: { enabled: false } },
});
const clients = { bare: sdk(), wrapped: withFlights(sdk(), { flights, stage: 'bench' }), floor: sdk() };
const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const phases = { bare: [] as number[][], wrapped: [] as number[][], floor: [] as number[][] };
for (let i = 0; i < N; i++) {
  for (const name of ['bare', 'wrapped', 'floor'] as const) {
    // GAP=<ms>: each call starts on an idle process (nothing left of the previous call's work).
    if (GAP > 0) await new Promise((resolve) => setTimeout(resolve, GAP));
    const t0 = performance.now();
    // The floor: the bare call after the one round trip an uncontended acquire needs at the least.
    if (name === 'floor') await redis.set(`phases-floor-${randomUUID()}`, '1', 'PX', 10_000, 'NX', 'GET');
    await clients[name].chat.completions.create({
      model: 'fake-model',
      temperature: 0,
      messages: [{ role: 'user', content: `p ${randomUUID()}` }],
    });
    const t1 = performance.now();
    if (i >= N / 4)
      phases[name].push([
        marks.fetchAt - t0,
        marks.fetchedAt - marks.fetchAt,
        t1 - marks.fetchedAt,
        t1 - t0,
        marks.acquireAt - t0,
        marks.acquiredAt - marks.acquireAt,
        marks.fetchAt - marks.acquiredAt,
      ]);
  }
}
const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!.toFixed(3);
for (const name of ['bare', 'floor', 'wrapped'] as const) {
  const cols = [0, 1, 2, 3, 4, 5, 6].map((c) => median(phases[name].map((p) => p[c]!)));
  console.log(`${name.padEnd(8)} to fetch ${cols[0]}  fetch ${cols[1]}  after ${cols[2]}  total ${cols[3]} ms (median)`);
  if (name === 'wrapped') console.log(`         of which: to acquire ${cols[4]}  acquire ${cols[5]}  acquired to fetch ${cols[6]} ms`);
}
await flights.close();
redis.disconnect();
await model.close();
process.exit(0);
