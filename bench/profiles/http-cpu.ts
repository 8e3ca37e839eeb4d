/**
 * Server CPU time per request of the `http` scenario's servers, contenders interleaved by round — steadier
 * than req/s on a shared machine. Each server runs in its own process (`src/scenarios/http-server.ts`).
 *
 * `cd bench && ROUNDS=3 SECONDS=4 URLS=distinct CONTENDERS=plain,flight-local node_modules/.bin/tsx profiles/http-cpu.ts`
 * `CPU_PROF=<dir>` writes a `--cpu-prof` profile of every server (summarise with `node profiles/top-frames.mjs`).
 * `REDIS_URL` (default redis://127.0.0.1:6379) for `flight-distributed`; keys go under a unique prefix.
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const here = dirname(fileURLToPath(import.meta.url));
const benchDir = join(here, '..');
const rounds = Number(process.env.ROUNDS ?? 3);
const seconds = Number(process.env.SECONDS ?? 4);
const urls = process.env.URLS ?? 'distinct';
const contenders = (process.env.CONTENDERS ?? 'plain,http-layer-only,flight-local').split(',');
const profileDir = process.env.CPU_PROF;
const run = `${process.pid}-${Date.now().toString(36)}`;

type Stats = { handlerRuns: number; cpuUs: number };

async function measure(contender: string, round: number): Promise<{ cpuUsPerReq: number; reqPerSec: number; handlerRuns: number }> {
  const child = fork(join(benchDir, 'src/scenarios/http-server.ts'), [], {
    cwd: benchDir,
    execArgv: ['--import', 'tsx', ...(profileDir ? ['--cpu-prof', '--cpu-prof-dir', join(profileDir, `${contender}-${round}`)] : [])],
    env: {
      ...process.env,
      TSX_TSCONFIG_PATH: join(benchDir, 'tsconfig.json'),
      HTTP_BENCH_CONTENDER: contender,
      HTTP_BENCH_REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      HTTP_BENCH_PREFIX: `fb:httpcpu:${run}:${contender}:${round}:`,
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const [{ port }] = (await once(child, 'message')) as [{ port: number }];
  const base = `http://127.0.0.1:${port}`;
  const stats = async (): Promise<Stats> => {
    child.send({ cmd: 'stats' });
    return ((await once(child, 'message')) as [Stats])[0];
  };
  const distinct = urls === 'distinct';
  const load = (path: string, duration: number) =>
    autocannon({ url: `${base}${path}`, connections: 64, duration, ...(distinct ? { idReplacement: true } : {}) });
  await load(distinct ? '/item/warm-[<id>]' : '/item/warm', 1);
  const before = await stats();
  const result = await load(distinct ? '/item/[<id>]' : `/item/same-${round}`, seconds);
  const after = await stats();
  const exited = once(child, 'exit');
  child.send({ cmd: 'exit' });
  await exited;
  return { cpuUsPerReq: (after.cpuUs - before.cpuUs) / Math.max(1, result.requests.total), reqPerSec: result.requests.average, handlerRuns: after.handlerRuns };
}

const samples = new Map<string, number[]>(contenders.map((c) => [c, []]));
for (let round = 0; round < rounds; round++) {
  for (const contender of contenders) {
    const { cpuUsPerReq, reqPerSec, handlerRuns } = await measure(contender, round);
    samples.get(contender)!.push(cpuUsPerReq);
    console.log(`${urls} ${contender} round ${round + 1}: ${cpuUsPerReq.toFixed(1)} µs/req, ${Math.round(reqPerSec)} req/s, ${handlerRuns} handler runs in all`);
  }
}
for (const [contender, values] of samples) {
  const sorted = [...values].sort((a, b) => a - b);
  console.log(`${contender}: min ${sorted[0]!.toFixed(1)} / median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(1)} µs/req`);
}
