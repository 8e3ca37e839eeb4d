/**
 * Server CPU time per request of the `http` scenario's servers, contenders interleaved by round — steadier
 * than req/s on a shared machine. Each server runs in its own process (`src/scenarios/http-server.ts`).
 *
 * `cd bench && ROUNDS=3 SECONDS=4 URLS=distinct CONTENDERS=plain,flight-local node_modules/.bin/tsx profiles/http-cpu.ts`
 * `CPU_PROF=<dir>` writes a `--cpu-prof` profile of every server (summarise with `node profiles/top-frames.mjs`).
 * `REDIS_URL` (default redis://127.0.0.1:6379) for `flight-distributed`; keys go under a unique prefix.
 */
import { join } from 'node:path';
import { load, serverStats, startHttpServer, stopServer, type HttpContender } from '../src/scenarios/http.js';

const rounds = Number(process.env.ROUNDS ?? 3);
const seconds = Number(process.env.SECONDS ?? 4);
const distinct = (process.env.URLS ?? 'distinct') === 'distinct';
const contenders = (process.env.CONTENDERS ?? 'plain,http-layer-only,flight-local').split(',') as HttpContender[];
const profileDir = process.env.CPU_PROF;
const run = `${process.pid}-${Date.now().toString(36)}`;

async function measure(contender: HttpContender, round: number): Promise<{ cpuUsPerReq: number; reqPerSec: number; handlerRuns: number }> {
  const server = await startHttpServer({
    contender,
    redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    prefix: `fb:httpcpu:${run}:${contender}:${round}:`,
    profileDir: profileDir ? join(profileDir, `${contender}-${round}`) : undefined,
  });
  try {
    const opts = { connections: 64 };
    await load(server.url, distinct ? '/item/warm-[<id>]' : '/item/warm', opts, 1, distinct);
    const before = await serverStats(server);
    const result = await load(server.url, distinct ? '/item/[<id>]' : `/item/same-${round}`, opts, seconds, distinct);
    const after = await serverStats(server);
    return {
      cpuUsPerReq: (after.cpuUs - before.cpuUs) / Math.max(1, result.requests.total),
      reqPerSec: result.requests.average,
      handlerRuns: after.handlerRuns,
    };
  } finally {
    await stopServer(server);
  }
}

const samples = new Map<string, number[]>(contenders.map((c) => [c, []]));
for (let round = 0; round < rounds; round++) {
  for (const contender of contenders) {
    const { cpuUsPerReq, reqPerSec, handlerRuns } = await measure(contender, round);
    samples.get(contender)!.push(cpuUsPerReq);
    console.log(
      `${distinct ? 'distinct' : 'same'} ${contender} round ${round + 1}: ${cpuUsPerReq.toFixed(1)} µs/req, ${Math.round(reqPerSec)} req/s, ${handlerRuns} handler runs in all`,
    );
  }
}
for (const [contender, values] of samples) {
  const sorted = [...values].sort((a, b) => a - b);
  console.log(`${contender}: min ${sorted[0]!.toFixed(1)} / median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(1)} µs/req`);
}
