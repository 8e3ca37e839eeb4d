/**
 * Scenario `http` — an Express route returning 1 KB of JSON, driven by autocannon (64 connections), side by
 * side in one run: without the middleware (`plain`), behind `@flight/express` in distributed mode over the
 * bench's Redis (`flight-distributed`) and in local mode (`flight-local`), and behind the least a Redis response
 * cache does, a GET and on a miss a SET per request (`redis-cache`: the plain cache the unshared path is held
 * against). Two URL patterns:
 * `distinct` — a new URL per request (every request is an owner flight: the middleware's pure overhead);
 * `same` — every connection hammers one URL (the handler should run once for the whole burst).
 * Each server runs in its own process, the load generator in this one, so they never share an event loop.
 * Set HTTP_BENCH_CPU_PROF=<dir> to write a `--cpu-prof` profile of each server process under it.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { prefixOf, type BenchContext, type ResultRow } from '../context.js';
import { libraryExecArgv } from '../library.js';
import { median, round, roundOrder } from '../stats.js';

export const HTTP_CONTENDERS = ['plain', 'flight-distributed', 'flight-local', 'redis-cache'] as const;
/** `http-layer-only` (diagnostic, HTTP_BENCH_LAYER_ONLY=1): the middleware over a stand-in that just runs the handler. */
export type HttpContender = (typeof HTTP_CONTENDERS)[number] | 'http-layer-only';
export type UrlPattern = 'distinct' | 'same';

export interface HttpOptions {
  /** Measured window per row, seconds. */
  durationS: number;
  /** Warm-up per server before its window (JIT, connections, scripts), seconds. */
  warmupS: number;
  connections: number;
  /**
   * Rounds over the contenders, interleaved with the order rotated, so a change in machine load hits them
   * alike; a row's figures are the median of its rounds, and `vsPlain` the median of its per-round ratios to
   * the plain route of the same round (`httpRows`).
   */
  rounds: number;
  urls: readonly UrlPattern[];
}

export function httpOptions(quick: boolean): HttpOptions {
  return { durationS: quick ? 2 : 5, warmupS: quick ? 0.5 : 1, connections: 64, rounds: quick ? 1 : 3, urls: ['distinct', 'same'] };
}

const here = dirname(fileURLToPath(import.meta.url));
const benchDir = join(here, '..', '..');

export interface ServerProcess {
  child: ChildProcess;
  url: string;
}

/** Starts the scenario's server for `contender` in its own process (`http-server.ts`), keys under `prefix`. */
export async function startHttpServer(options: {
  contender: HttpContender;
  redisUrl: string;
  prefix: string;
  profileDir?: string | undefined;
}): Promise<ServerProcess> {
  const { profileDir } = options;
  const child = fork(join(here, 'http-server.ts'), [], {
    cwd: benchDir,
    // One directory per server: the main thread's profile is the largest file in it (tsx adds a loader thread).
    execArgv: [...libraryExecArgv(), '--import', 'tsx', ...(profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [])],
    env: {
      ...process.env,
      HTTP_BENCH_CONTENDER: options.contender,
      HTTP_BENCH_REDIS_URL: options.redisUrl,
      HTTP_BENCH_PREFIX: options.prefix,
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const [message] = (await Promise.race([
    once(child, 'message'),
    once(child, 'exit').then(([code]) => Promise.reject(new Error(`http bench server exited with ${code}`))),
  ])) as [{ port: number }];
  return { child, url: `http://127.0.0.1:${message.port}` };
}

function startServer(ctx: BenchContext, contender: HttpContender, tag: string): Promise<ServerProcess> {
  const profileDir = process.env.HTTP_BENCH_CPU_PROF;
  return startHttpServer({
    contender,
    redisUrl: ctx.redis.url,
    prefix: prefixOf(ctx, 'http', `${contender}-${tag}`),
    profileDir: profileDir ? join(profileDir, `${contender}-${tag}`) : undefined,
  });
}

/** The server's handler runs and CPU time (user + system, µs) so far. */
export async function serverStats(server: ServerProcess): Promise<{ handlerRuns: number; cpuUs: number }> {
  server.child.send({ cmd: 'stats' });
  const [reply] = (await once(server.child, 'message')) as [{ handlerRuns: number; cpuUs: number }];
  return reply;
}

export async function stopServer(server: ServerProcess): Promise<void> {
  if (server.child.exitCode !== null) return;
  const exited = once(server.child, 'exit');
  server.child.send({ cmd: 'exit' });
  const timer = setTimeout(() => server.child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

/** Drives `url` + `path` with autocannon for `durationS` (`distinct`: a fresh URL per request). */
export function load(
  url: string,
  path: string,
  opts: Pick<HttpOptions, 'connections'>,
  durationS: number,
  distinct: boolean,
): Promise<autocannon.Result> {
  return autocannon({
    url: `${url}${path}`,
    connections: opts.connections,
    duration: durationS,
    // `[<id>]` becomes a fresh id in every request: one URL per request.
    ...(distinct ? { idReplacement: true } : {}),
  });
}

export interface Sample {
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  non2xx: number;
  errors: number;
  handlerRuns: number;
  /** Server CPU time (user + system) per answered request: steadier than req/s on a shared machine. */
  cpuUsPerReq: number;
}

async function measure(ctx: BenchContext, contender: HttpContender, urls: UrlPattern, round_: number, opts: HttpOptions): Promise<Sample> {
  const server = await startServer(ctx, contender, `${urls}-${round_}`);
  try {
    const distinct = urls === 'distinct';
    await load(server.url, distinct ? '/item/warm-[<id>]' : '/item/warm', opts, opts.warmupS, distinct);
    const before = await serverStats(server);
    const result = await load(server.url, distinct ? '/item/[<id>]' : `/item/same-${round_}`, opts, opts.durationS, distinct);
    const after = await serverStats(server);
    const runs = after.handlerRuns - before.handlerRuns;
    return {
      reqPerSec: result.requests.average,
      p50Ms: result.latency.p50,
      p99Ms: result.latency.p99,
      maxMs: result.latency.max,
      non2xx: result.non2xx,
      errors: result.errors + result.timeouts,
      handlerRuns: runs,
      cpuUsPerReq: (after.cpuUs - before.cpuUs) / Math.max(1, result.requests.total),
    };
  } finally {
    await stopServer(server);
  }
}

/**
 * One row per contender from its rounds (`samples`, round by round, `plain` among them): req/s and the
 * other figures are the median of the rounds, `vsPlain` the median of the per-round ratios to plain (both
 * measured within seconds of each other), `vsRedisCache` the same to `redis-cache` for the middleware's rows,
 * counts summed, max the largest.
 */
export function httpRows(urls: UrlPattern, samples: ReadonlyMap<HttpContender, readonly Sample[]>, connections: number): ResultRow[] {
  /** The median of `these` rounds' req/s over the same rounds of `reference`; null without a round of both. */
  const vs = (these: readonly Sample[], reference: readonly Sample[] | undefined) => {
    const ratios = these.map((s, r) => s.reqPerSec / Math.max(1e-9, reference?.[r]?.reqPerSec ?? Number.NaN)).filter(Number.isFinite);
    return ratios.length ? round(median(ratios), 2) : null;
  };
  const rows: ResultRow[] = [];
  for (const [contender, these] of samples) {
    const handlerRuns = Math.round(median(these.map((s) => s.handlerRuns)));
    rows.push({
      scenario: 'http',
      urls,
      contender,
      reqPerSec: Math.round(median(these.map((s) => s.reqPerSec))),
      vsPlain: vs(these, samples.get('plain')),
      ...(contender.startsWith('flight-') ? { vsRedisCache: vs(these, samples.get('redis-cache')) } : {}),
      roundReqPerSec: these.map((s) => Math.round(s.reqPerSec)),
      upstreamCalls: handlerRuns,
      // `same`: the measured window is one burst on one URL.
      ...(urls === 'same' ? { handlerRunsPerBurst: handlerRuns } : {}),
      serverCpuUsPerReq: Math.round(median(these.map((s) => s.cpuUsPerReq))),
      p50Ms: round(median(these.map((s) => s.p50Ms))),
      p99Ms: round(median(these.map((s) => s.p99Ms))),
      maxMs: round(Math.max(...these.map((s) => s.maxMs))),
      non2xx: these.reduce((n, s) => n + s.non2xx, 0),
      errors: these.reduce((n, s) => n + s.errors, 0),
      connections,
    });
  }
  return rows;
}

/** Runs every URL pattern against the contenders, interleaved by round; one row per pattern and contender. */
export async function runHttp(ctx: BenchContext, opts: HttpOptions): Promise<ResultRow[]> {
  const rows: ResultRow[] = [];
  const contenders: HttpContender[] = [...HTTP_CONTENDERS, ...(process.env.HTTP_BENCH_LAYER_ONLY ? (['http-layer-only'] as const) : [])];
  for (const urls of opts.urls) {
    const samples = new Map<HttpContender, Sample[]>(contenders.map((c) => [c, []]));
    for (let r = 0; r < opts.rounds; r++) {
      for (const contender of roundOrder(contenders, r)) {
        const sample = await measure(ctx, contender, urls, r, opts);
        ctx.log(
          `http ${urls} ${contender} round ${r + 1}: ${Math.round(sample.reqPerSec)} req/s, ` +
            `${Math.round(sample.cpuUsPerReq)} µs server CPU/req, ${sample.handlerRuns} handler runs`,
        );
        samples.get(contender)!.push(sample);
      }
    }
    rows.push(...httpRows(urls, samples, opts.connections));
  }
  return rows;
}
