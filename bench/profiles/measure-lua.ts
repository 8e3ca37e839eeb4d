/**
 * Usec per call of the real acquire (new flight) and complete scripts, pipelined (100 per batch) on a
 * redis-server of its own: the script's own cost with little network noise. With `BASE_LUA` (a
 * lua.generated.ts of another commit, e.g. `git show main:packages/redis-scripts/src/spine/lua.generated.ts >
 * /tmp/base.ts`), the same rounds run both bundles alternately, for a before → after in one run.
 * Run: cd bench && node_modules/.bin/tsx profiles/measure-lua.ts
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { LUA_SCRIPTS } from '@flight/redis-scripts';
import { startRedisServer } from '@flight/test-servers';

type Bundle = { acquire: { source: string }; complete: { source: string } };
const N = Number(process.env.N ?? 20_000);
const bundles: Record<string, Bundle> = { current: LUA_SCRIPTS };
if (process.env.BASE_LUA) bundles.base = ((await import(process.env.BASE_LUA)) as { LUA_SCRIPTS: Bundle }).LUA_SCRIPTS;
const server = await startRedisServer();
const r = new Redis(server.url);
const usecPerCall = async () =>
  Number(/cmdstat_evalsha:calls=\d+,usec=\d+,usec_per_call=([\d.]+)/.exec(String(await r.info('commandstats')))?.[1]);
const shas: Record<string, { acquire: string; complete: string }> = {};
for (const [name, bundle] of Object.entries(bundles)) {
  shas[name] = {
    acquire: (await r.script('LOAD', bundle.acquire.source)) as string,
    complete: (await r.script('LOAD', bundle.complete.source)) as string,
  };
}
const result = 'x'.repeat(1024);
for (let round = 0; round < 3; round++) {
  for (const [name, sha] of Object.entries(shas)) {
    const tokens = Array.from({ length: N }, () => randomUUID());
    const epochs: string[] = [];
    await r.config('RESETSTAT');
    for (let k = 0; k < N / 100; k++) {
      const p = r.pipeline();
      for (let i = 0; i < 100; i++) {
        const j = k * 100 + i;
        p.evalsha(sha.acquire, 1, `m:{${name}${round}-${j}}`, '', '0', '', 'a', tokens[j]!, '', '3000', '6000', '20000', '1');
      }
      const replies = (await p.exec())!;
      replies.forEach(([, reply], i) => (epochs[k * 100 + i] = String(((reply as unknown[])[1] as unknown[])[0])));
    }
    const acquire = await usecPerCall();
    await r.config('RESETSTAT');
    for (let k = 0; k < N / 100; k++) {
      const p = r.pipeline();
      for (let i = 0; i < 100; i++) {
        const j = k * 100 + i;
        p.evalsha(
          sha.complete,
          1,
          `m:{${name}${round}-${j}}`,
          '',
          `m:{${name}${round}-${j}}:db0:done`,
          'a',
          tokens[j]!,
          epochs[j]!,
          result,
          '60000',
          '8192',
        );
      }
      await p.exec();
    }
    console.log(JSON.stringify({ bundle: name, round, acquireUsec: acquire, completeUsec: await usecPerCall() }));
  }
}
r.disconnect();
await server.stop();
