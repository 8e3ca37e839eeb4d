/**
 * Pipelined floors of a script call inside Redis (µs per call from INFO commandstats), next to the plain
 * command the fast acquire sends: `node bench/profiles/lua-floors.mjs` from the repository root, on
 * REDIS_URL (default 127.0.0.1:6379; a redis-server of its own is steadier).
 */
import { Redis } from 'ioredis';

const r = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const N = 20000;
const val = 'x'.repeat(1100);
const variants = {
  ret1: `return 1`,
  getset: `local s = redis.call('GET', KEYS[1]); if not s then redis.call('SET', KEYS[1], ARGV[1], 'PX', 6000) end; return 1`,
  getset11: `local s = redis.call('GET', KEYS[1]); if not s then redis.call('SET', KEYS[1], ARGV[1], 'PX', 6000) end; return {'OWNER_NEW', {'1','2','3'}, false}`,
  time_getset: `local t = redis.call('TIME'); local s = redis.call('GET', KEYS[1]); if not s then redis.call('SET', KEYS[1], ARGV[1], 'PX', 6000) end; return 1`,
};
async function run(name, src, args) {
  const sha = await r.script('LOAD', src);
  await r.config('RESETSTAT');
  for (let k = 0; k < N / 100; k++) {
    const p = r.pipeline();
    for (let i = 0; i < 100; i++) p.evalsha(sha, 1, `m:{${name}-${Math.random()}}`, ...args);
    await p.exec();
  }
  const info = String(await r.info('commandstats'));
  console.log(name, /cmdstat_evalsha:calls=\d+,usec=\d+,usec_per_call=([\d.]+)/.exec(info)?.[1]);
}
async function runSetNx() {
  const record = 'R' + '0'.repeat(128) + '1:a36:' + 'x'.repeat(36) + '0:0:0:0:0:';
  await r.config('RESETSTAT');
  for (let k = 0; k < N / 100; k++) {
    const p = r.pipeline();
    for (let i = 0; i < 100; i++) p.set(`m:{setnx-${Math.random()}}`, record, 'PX', 6000, 'NX', 'GET');
    await p.exec();
  }
  console.log(
    'SET PX NX GET (200 B)',
    /cmdstat_set:calls=\d+,usec=\d+,usec_per_call=([\d.]+)/.exec(String(await r.info('commandstats')))?.[1],
  );
}
for (let round = 0; round < 2; round++) {
  for (const [n, s] of Object.entries(variants)) await run(n, s, [val]);
  await run('getset-11args', variants.getset, [val, '0', '', 'a', 'tok', '', '3000', '6000', '20000', '1', '']);
  await runSetNx();
}
r.disconnect();
