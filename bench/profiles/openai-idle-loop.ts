/**
 * Uncontended calls of one client, each after 3 ms of idle, for a CPU profile of what an idle node's call costs
 * (openai-overhead.md, "Where an idle node's call spends it"). One node on the shared Redis, the fake model
 * in-process answering in ~1 ms. `WHICH=wrapped|bare` (default wrapped), `N` calls (default 2,000):
 * `cd bench && node --conditions=@flight/source --cpu-prof --cpu-prof-interval 20 --cpu-prof-dir=/tmp/prof --import tsx profiles/openai-idle-loop.ts`,
 * then `node profiles/by-package.mjs <the larger profile> 2000`.
 */
import { randomUUID } from 'node:crypto';
import { createSingleFlight } from '@flight/core';
import { startFakeModel } from '@flight/fake-model';
import { withFlights } from '@flight/openai';
import { createIoredisCoordinator } from '@flight/redis-ioredis';
import OpenAI from 'openai';

const N = Number(process.env.N ?? 2000);
const wrapped = (process.env.WHICH ?? 'wrapped') === 'wrapped';
const model = await startFakeModel({ port: 0, latencyMs: 1 });
const sdk = new OpenAI({ baseURL: `${model.url}/v1`, apiKey: 'sk-bench', maxRetries: 0 });
const coordinator = createIoredisCoordinator({ redis: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', prefix: `idle-${randomUUID()}` });
const flights = createSingleFlight({ coordinator, defaults: { l1: { enabled: false } } });
const client = wrapped ? withFlights(sdk, { flights, stage: 'bench' }) : sdk;
for (let i = 0; i < N; i++) {
  await new Promise((resolve) => setTimeout(resolve, 3));
  await client.chat.completions.create({ model: 'fake-model', temperature: 0, messages: [{ role: 'user', content: `p ${randomUUID()}` }] });
}
await flights.close();
await coordinator.close();
await model.close();
