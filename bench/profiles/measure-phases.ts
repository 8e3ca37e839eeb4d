/** Redis usec per script call, per phase (acquire, complete), on a redis-server of its own. */
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
const fences: any[] = [];
async function phase(name: string, fn: (i: number) => Promise<unknown>) {
  await server.command('CONFIG', 'RESETSTAT');
  const b = await stats();
  let next = 0;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (next < N) await fn(next++);
    }),
  );
  const a = await stats();
  console.log(name, +((a.usec - b.usec) / (a.calls - b.calls)).toFixed(2), 'usec/call');
}
for (let round = 0; round < 2; round++) {
  fences.length = 0;
  await phase('acquire(new)', async (i) => {
    const key = `r${round}-${i}`;
    const r = await c.acquire({ stage: 's', key, ...LEASE, ownerId: 'a', ownerToken: randomUUID(), startRunning: true } as any);
    fences[i] = { stage: 's', key, ownerId: 'a', ownerToken: r.meta.ownerToken, epoch: r.meta.epoch };
  });
  await phase('acquire(follow)', (i) => c.acquire({ stage: 's', key: `r${round}-${i}`, ...LEASE, ownerId: 'b', ownerToken: randomUUID() }));
  await phase('heartbeat', (i) => c.heartbeat(fences[i], LEASE));
  await phase('complete', (i) => c.complete(fences[i], { result, resultTtlMs: 60_000 }));
  await phase('read', (i) => c.readMeta(fences[i]));
}
await c.close();
await server.stop();
