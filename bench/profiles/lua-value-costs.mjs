/**
 * What a result's bytes cost inside a Redis 7 script, and whether batching or keeping the value out of Lua
 * would make the untouched complete cheaper (bench/profiles/redis.md, Wave 12). Start a redis-server of its
 * own (`redis-server --port 6390 --save '' --appendonly no --daemonize yes`), then
 * `REDIS_URL=redis://127.0.0.1:6390 node bench/profiles/lua-value-costs.mjs` from the repository root. It
 * FLUSHALLs that server between measurements: never point it at a Redis holding data.
 *
 * Three measurements, µs per flight (`INFO cpu`: the server's user + system CPU; `INFO commandstats`: the
 * time inside the commands):
 * 1. `size`: a script that SETs one value of 16 B … 5 KB (the value in ARGV), time inside EVALSHA.
 * 2. `batch`: the compare-and-set script of the untouched complete for 1 key per call, against one script
 *    call doing the same for 2 … 64 keys (64 flights in flight), server CPU per key.
 * 3. `layout`: per owner flight, the fast acquire's `SET … NX GET` and then either the compare-and-set
 *    script (`script`), a plain SET of the value to a staging key and a script that compares and RENAMEs it
 *    into place (`rename`: the value never enters Lua), or cache-manager's GET + SET (`get+set`), for
 *    1.1 KB, 10 KB and 100 KB values.
 */
import { Redis } from 'ioredis';

const r = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6390');
const RECORD = 'R' + '0'.repeat(160);
const CAS = "if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) return 1";
const CAS_MANY = `local wrote = {}
for i = 1, #KEYS do
  local a = i * 3 - 2
  if redis.call('GET', KEYS[i]) == ARGV[a] then redis.call('SET', KEYS[i], ARGV[a + 1], 'PX', ARGV[a + 2]) wrote[i] = 1 else wrote[i] = 0 end
end
return wrote`;
const CAS_RENAME =
  "if redis.call('GET', KEYS[1]) ~= ARGV[1] then redis.call('DEL', KEYS[2]) return 0 end " +
  "if redis.call('EXISTS', KEYS[2]) == 0 then return 0 end redis.call('RENAME', KEYS[2], KEYS[1]) return 1";

async function serverCpu() {
  const info = String(await r.info('cpu'));
  return Number(/used_cpu_user:([\d.]+)/.exec(info)[1]) + Number(/used_cpu_sys:([\d.]+)/.exec(info)[1]);
}
async function commandUs(command) {
  return Number(new RegExp(`cmdstat_${command}:calls=\\d+,usec=(\\d+)`).exec(String(await r.info('commandstats')))?.[1] ?? 0);
}
/** Runs `send(pipeline, i)` for i < n in pipelines of `depth`; server CPU and EVALSHA time per unit of `per`. */
async function measure(n, depth, send, per = n) {
  await r.config('RESETSTAT');
  const before = await serverCpu();
  for (let k = 0; k < n; k += depth) {
    const p = r.pipeline();
    for (let i = k; i < Math.min(n, k + depth); i++) send(p, i);
    await p.exec();
  }
  const cpu = ((await serverCpu()) - before) * 1e6;
  const evalsha = await commandUs('evalsha');
  await r.flushall();
  return { cpu: (cpu / per).toFixed(2), evalsha: (evalsha / per).toFixed(2) };
}
const keysOf = (n, tag) => Array.from({ length: n }, (_, i) => `{${tag}-${i}-${Math.random()}}:meta`);
async function seed(keys) {
  for (let k = 0; k < keys.length; k += 200) {
    const p = r.pipeline();
    for (const key of keys.slice(k, k + 200)) p.set(key, RECORD, 'PX', 60_000);
    await p.exec();
  }
}

const setSha = await r.script('LOAD', "redis.call('SET', KEYS[1], ARGV[1]) return 1");
const casSha = await r.script('LOAD', CAS);
const casManySha = await r.script('LOAD', CAS_MANY);
const renameSha = await r.script('LOAD', CAS_RENAME);

for (let round = 1; round <= 2; round++) {
  const sizes = [];
  for (const size of [16, 200, 1100, 5000]) {
    const value = 'x'.repeat(size);
    const { evalsha } = await measure(20_000, 64, (p, i) => p.evalsha(setSha, 1, `s:${i}:${Math.random()}`, value));
    sizes.push(`${size} B ${evalsha}`);
  }
  console.log(`round ${round} size (µs inside EVALSHA): ${sizes.join(' · ')}`);

  const batches = [];
  const value = 'x'.repeat(1100);
  for (const batch of [1, 4, 16, 64]) {
    const keys = keysOf(38_400, `b${batch}`);
    await seed(keys);
    const { cpu } = await measure(
      keys.length / batch,
      64 / batch,
      (p, i) => {
        const some = keys.slice(i * batch, (i + 1) * batch);
        if (batch === 1) p.evalsha(casSha, 1, some[0], RECORD, value, '60000');
        else p.evalsha(casManySha, some.length, ...some, ...some.flatMap(() => [RECORD, value, '60000']));
      },
      keys.length,
    );
    batches.push(`${batch}/call ${cpu}`);
  }
  console.log(`round ${round} batch (server CPU µs per key): ${batches.join(' · ')}`);

  for (const size of [1100, 10_000, 100_000]) {
    const big = 'x'.repeat(size);
    const n = Math.min(30_000, Math.floor(3e7 / size));
    const layouts = [];
    for (const layout of ['script', 'rename', 'get+set']) {
      const keys = keysOf(n, layout);
      // The fast acquire first, in pipelines of its own as in a flight; then the complete.
      await seed(keys);
      const { cpu } = await measure(n, 64, (p, i) => {
        const key = keys[i];
        if (layout === 'script') p.evalsha(casSha, 1, key, RECORD, big, '60000');
        else if (layout === 'rename') p.set(`${key}:cas`, big, 'PX', 60_000).evalsha(renameSha, 2, key, `${key}:cas`, RECORD);
        else p.get(key).set(key, big, 'PX', 60_000);
      });
      layouts.push(`${layout} ${cpu}`);
    }
    console.log(`round ${round} layout ${size} B (server CPU µs per complete): ${layouts.join(' · ')}`);
  }
}
r.disconnect();
