import Fastify from 'fastify';
import { createSingleFlight } from '@flight/core';
import { fastifyFlight } from './src/index.js';
const singleFlight = createSingleFlight();
const app = Fastify();
await app.register(fastifyFlight, { singleFlight, stage: 'perf' });
const body = { report: 'x'.repeat(200) };
app.get('/plain/:id', async () => body);
app.get('/flight/:id', { config: { flight: true } }, async () => body);
await app.ready();
async function run(prefix: string, n: number, distinct: boolean) {
  const start = process.cpuUsage();
  for (let i = 0; i < n; i++) await app.inject({ method: 'GET', url: `${prefix}/${distinct ? i : 0}` });
  const cpu = process.cpuUsage(start);
  return ((cpu.user + cpu.system) / n).toFixed(1);
}
const order = process.argv[2] === 'same-first';
for (const round of [0, 1, 2]) {
  const r: Record<string, string> = {};
  if (order) r.same = await run(`/flight/s${round}`, 3000, false);
  r.plain = await run('/plain', 3000, true);
  r.distinct = await run(`/flight/d${round}`, 3000, true);
  if (!order) r.same = await run(`/flight/s${round}`, 3000, false);
  console.log(round, JSON.stringify(r));
}
await app.close();
await singleFlight.close();
