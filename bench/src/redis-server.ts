/**
 * The benchmark's Redis: a redis-server of its own on a free port (isolated memory figures, FLUSHALL
 * allowed), or the one at BENCH_REDIS_URL when set (then everything stays under the run's prefix).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { startRedisServer } from '@flight/test-servers';
import { valkeyServerBinary } from '@flight/test-servers';

export interface BenchRedis {
  url: string;
  port: number;
  /** True when this run started the server (FLUSHALL and memory figures are safe). */
  own: boolean;
  version: string;
  stop(): Promise<void>;
}

/** The version `binary --version` reports (redis-server and valkey-server print `v=<version>`). */
function serverVersion(binary = 'redis-server'): string {
  try {
    return /v=(\S+)/.exec(execFileSync(binary, ['--version'], { encoding: 'utf8' }))?.[1] ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

export async function startBenchRedis(): Promise<BenchRedis> {
  const external = process.env.BENCH_REDIS_URL;
  if (external) {
    const u = new URL(external);
    return { url: external, port: Number(u.port || 6379), own: false, version: 'external', stop: async () => {} };
  }
  const hasServer = spawnSync('redis-server', ['--version']).status === 0;
  if (!hasServer) {
    const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
    console.warn(`[bench] redis-server not found; using the shared Redis at ${url} (memory figures are approximate)`);
    return { url, port: Number(new URL(url).port || 6379), own: false, version: 'shared', stop: async () => {} };
  }
  const server = await startRedisServer({ args: ['--maxclients', '20000', '--hz', '10'] });
  return { url: server.url, port: server.port, own: true, version: serverVersion(), stop: () => server.stop() };
}

/**
 * A valkey-server >= 8.1 of the run's own on a free port (the one `npm test` builds and caches, or
 * FLIGHT_VALKEY_SERVER), for the scenarios that measure what a server with `SET … IFEQ` changes; or why
 * there is none (`node tooling/scripts/valkey.mjs` builds it).
 */
export async function startBenchValkey(): Promise<BenchRedis | { missing: string }> {
  let binary: string;
  try {
    binary = valkeyServerBinary();
  } catch (error) {
    return { missing: (error as Error).message };
  }
  const server = await startRedisServer({ binary, args: ['--maxclients', '20000', '--hz', '10'] });
  return { url: server.url, port: server.port, own: true, version: `valkey ${serverVersion(binary)}`, stop: () => server.stop() };
}
