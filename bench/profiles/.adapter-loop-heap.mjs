/**
 * CPU µs per owner flight of `SingleFlight.execute` in distributed mode on either adapter, over the
 * BUILT packages (`pnpm exec turbo run build` first: what users run, no tsx keep-names helpers):
 * `[FLIGHT_BUNDLE=file.mjs] node [--cpu-prof] bench/profiles/adapter-loop.mjs ioredis|node-redis|cache-manager [flights] [rounds]`
 * (cache-manager: the peer of the distinct-keys target, `wrap` over memory + `@keyv/redis`, in the same loop)
 * 64 in flight, distinct keys, an instant upstream returning one 1 KB object, the bench's flight policy
 * (L1 off, guard extras off), on REDIS_URL (default the shared 127.0.0.1:6379) under a unique prefix.
 */
// FLIGHT_BUNDLE: an esbuild bundle exporting the three factories (to compare two versions of the source).
const bundle = process.env.FLIGHT_BUNDLE;
const { createSingleFlight } = bundle ? await import(bundle) : await import('@flight/core');
const { createIoredisCoordinator } = bundle ? await import(bundle) : await import('@flight/redis-ioredis');
const { createNodeRedisCoordinator } = bundle ? await import(bundle) : await import('@flight/redis-node');
import { Redis } from 'ioredis';
import { profileDefaults } from './profile-defaults.mjs';
import { createClient } from 'redis';

const adapter = process.argv[2] ?? 'ioredis';
const flights = Number(process.argv[3] ?? 20_000);
const rounds = Number(process.argv[4] ?? 1);
const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `prof-adapter-${process.pid}-${Date.now()}`;

let client;
let coordinator;
let flight;
if (adapter === 'cache-manager') {
  // The peer the distinct-keys target compares with, in the same loop: 7.x `wrap` over memory + @keyv/redis.
  const { createCache } = await import('cache-manager');
  const { Keyv } = await import('keyv');
  const { createKeyv } = await import('@keyv/redis');
  const cache = createCache({ stores: [new Keyv(), createKeyv(url, { namespace: prefix, keyPrefixSeparator: ':' })] });
  flight = { execute: (_stage, key, fn) => cache.wrap(key, fn, 10_000), close: async () => {} };
  coordinator = { close: () => cache.disconnect() };
  client = { disconnect() {} };
} else if (adapter === 'node-redis') {
  client = createClient({ url });
  await client.connect();
  coordinator = createNodeRedisCoordinator({ client, prefix });
} else {
  client = new Redis(url);
  coordinator = createIoredisCoordinator({ client, prefix });
}
flight ??= createSingleFlight({
  mode: 'distributed',
  coordinator,
  defaults: profileDefaults(),
});
const text = 'lorem ipsum dolor sit amet '.repeat(40);
const payload = { id: 1, title: text.slice(0, 100), body: text.slice(0, 870) };
const supplier = async () => payload;

async function loop(tag, n) {
  let next = 0;
  const worker = async () => {
    while (next < n) await flight.execute('bench', `${tag}${next++}`, supplier);
  };
  await Promise.all(Array.from({ length: 64 }, worker));
}

await loop('warm-', Math.min(5000, flights));
for (let r = 0; r < rounds; r++) {
  const start = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  await loop(`k${r}-`, flights);
  const ns = Number(process.hrtime.bigint() - start);
  const used = process.cpuUsage(cpu);
  console.log(
    JSON.stringify({
      adapter,
      flights,
      cpuUsPerFlight: +((used.user + used.system) / flights).toFixed(1),
      opsPerSec: Math.round(flights / (ns / 1e9)),
    }),
  );
}
await globalThis.__stopHeap?.(process.env.HEAP_OUT);
await flight.close();
await coordinator.close();
if (adapter === 'node-redis') await client.close();
else client.disconnect();
