/**
 * Two builds of the owner path side by side in ONE process, alternated in short slices (the order flipped
 * every slice), CPU µs per owner flight as the median of the slices: a drift of the machine lands on both.
 * Resolution about ±2 % with SLICES=40 (an A/A run shows it). Bundles from `bundle-flight.sh`:
 * `SLICES=40 node bench/profiles/ab-bundles.mjs /tmp/base/flight.mjs /tmp/new/flight.mjs`
 * ADAPTER=node-redis for @redis/client. 64 in flight, distinct keys, an instant upstream returning one 1 KB object, the bench's flight policy.
 */
import { profileCoordinator } from './profile-coordinator.mjs';
import { profileDefaults } from './profile-defaults.mjs';
const [aPath, bPath] = process.argv.slice(2, 4);
const slices = Number(process.env.SLICES ?? 16),
  per = Number(process.env.PER ?? 2000);
const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const text = 'lorem ipsum dolor sit amet '.repeat(40);
const policy = profileDefaults();
// ADAPTER=node-redis runs both sides on @redis/client instead of ioredis.
const adapter = process.env.ADAPTER ?? 'ioredis';
async function make(path, tag) {
  const m = await import(path);
  const { coordinator, close } = await profileCoordinator(m, adapter, url, `ab-${tag}-${process.pid}`);
  const flight = m.createSingleFlight({ mode: 'distributed', coordinator, defaults: policy });
  return { flight, close };
}
const sides = [await make(aPath, 'a'), await make(bPath, 'b')];
let seq = 0;
async function slice(side, n) {
  let next = 0;
  const supplier = async () => ({ id: seq, title: text.slice(0, 100), body: text.slice(0, 870) });
  const worker = async () => {
    while (next < n) {
      next++;
      await side.flight.execute('bench', `k${seq++}`, supplier);
    }
  };
  const c = process.cpuUsage();
  await Promise.all(Array.from({ length: 64 }, worker));
  const u = process.cpuUsage(c);
  return (u.user + u.system) / n;
}
for (const s of sides) await slice(s, 5000);
const res = [[], []];
for (let i = 0; i < slices; i++) for (const k of i % 2 ? [1, 0] : [0, 1]) res[k].push(await slice(sides[k], per));
const med = (a) => {
  const s = [...a].sort((x, y) => x - y);
  return s[s.length >> 1];
};
console.log(JSON.stringify({ a: +med(res[0]).toFixed(1), b: +med(res[1]).toFixed(1), ratio: +(med(res[1]) / med(res[0])).toFixed(3) }));
for (const s of sides) {
  await s.flight.close();
  await s.close();
}
