/**
 * What `redis.call('TIME')` costs inside a script: two scripts that differ only by it (the owner writes'
 * `now` from TIME, against a `now` passed in), pipelined on a redis-server of its own, alternated over 12
 * rounds (the order flipped every round), µs per call from INFO commandstats, with the per-round differences.
 * Run: cd bench && node_modules/.bin/tsx profiles/lua-time-cost.ts
 */
import { Redis } from 'ioredis';
import { startRedisServer } from '@flight/test-servers';
const server = await startRedisServer();
const r = new Redis(server.url);
const usec = async () =>
  Number(/cmdstat_evalsha:calls=\d+,usec=\d+,usec_per_call=([\d.]+)/.exec(String(await r.info('commandstats')))?.[1]);
const v = {
  plain: 'local n = tonumber(ARGV[1]); return 1',
  time: "local t = redis.call('TIME'); local n = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000); return 1",
};
const shas = Object.fromEntries(await Promise.all(Object.entries(v).map(async ([k, s]) => [k, (await r.script('LOAD', s)) as string])));
const out: Record<string, number[]> = { plain: [], time: [] };
for (let round = 0; round < 12; round++) {
  for (const name of round % 2 ? ['time', 'plain'] : ['plain', 'time']) {
    await r.config('RESETSTAT');
    for (let k = 0; k < 200; k++) {
      const p = r.pipeline();
      for (let i = 0; i < 100; i++) p.evalsha(shas[name], 1, `k{${i}}`, '1733150000000', 'x');
      await p.exec();
    }
    out[name]!.push(await usec());
  }
}
const med = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1];
const diffs = out.plain!.map((p, i) => +(out.time![i]! - p).toFixed(2));
console.log(JSON.stringify({ ...out, medianPlain: med(out.plain!), medianTime: med(out.time!), pairDiffs: diffs, medianDiff: med(diffs) }));
r.disconnect();
await server.stop();
