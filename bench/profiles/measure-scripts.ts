/**
 * Redis CPU per owner flight and per script, and client CPU per flight, on a redis-server of its own:
 * N distinct-key owner flights (acquire [+ markRunning] + complete, 1 KB result), 64 in flight, read from
 * INFO commandstats (evalsha usec) before/after. Run: pnpm exec tsx bench/profiles/measure-scripts.ts
 */
import { randomUUID } from 'node:crypto';
import { createIoredisCoordinator } from '@flight/redis-ioredis';
import { startRedisServer } from '@flight/test-servers';

const N = Number(process.env.N ?? 4000);
const LEASE = { takeoverAfterMs: 3000, leaseTtlMs: 6000, maxRunMs: 20_000 };
const server = await startRedisServer();
const c = createIoredisCoordinator({ redis: server.url, prefix: 'm' });
const result = 'x'.repeat(1024);
async function stats() {
  const text = String(await server.command('INFO', 'commandstats'));
  const line = /cmdstat_evalsha:calls=(\d+),usec=(\d+)/.exec(text);
  return { calls: Number(line?.[1] ?? 0), usec: Number(line?.[2] ?? 0) };
}
async function serverCpuUsec() {
  const text = String(await server.command('INFO', 'cpu'));
  return (Number(/used_cpu_sys:([\d.]+)/.exec(text)?.[1]) + Number(/used_cpu_user:([\d.]+)/.exec(text)?.[1])) * 1e6;
}
async function flight(i: number) {
  const input: any = { stage: 's', key: `k${i}-${randomUUID()}`, ...LEASE, ownerId: 'a', ownerToken: randomUUID(), startRunning: true };
  const r = await c.acquire(input);
  const fence = { stage: 's', key: input.key, ownerId: 'a', ownerToken: r.meta.ownerToken, epoch: r.meta.epoch };
  if (r.meta.status !== 'RUNNING') await c.markRunning(fence, LEASE);
  await c.complete(fence, { result, resultTtlMs: 60_000 });
}
for (let i = 0; i < 500; i++) await flight(i); // warm up
await server.command('CONFIG', 'RESETSTAT');
const before = await stats();
const cpuBefore = await serverCpuUsec();
const cpu = process.cpuUsage();
const started = performance.now();
let next = 0;
await Promise.all(
  Array.from({ length: 64 }, async () => {
    while (next < N) await flight(next++);
  }),
);
const wall = performance.now() - started;
const used = process.cpuUsage(cpu);
const after = await stats();
const cpuAfter = await serverCpuUsec();
const mem = String(await server.command('INFO', 'memory'));
const dbsize = Number(await server.command('DBSIZE'));
console.log(
  JSON.stringify({
    flights: N,
    opsPerSec: Math.round(N / (wall / 1000)),
    scriptsPerFlight: (after.calls - before.calls) / N,
    redisUsecPerFlight: +((after.usec - before.usec) / N).toFixed(1),
    redisUsecPerScript: +((after.usec - before.usec) / (after.calls - before.calls)).toFixed(1),
    serverCpuUsecPerFlight: +((cpuAfter - cpuBefore) / N).toFixed(1),
    clientUsecPerFlight: +((used.user + used.system) / N).toFixed(1),
    keys: dbsize,
    usedMemoryBytesPerFlight: Math.round(Number(/used_memory:(\d+)/.exec(mem)?.[1]) / (N + 500)),
  }),
);
await c.close();
await server.stop();
