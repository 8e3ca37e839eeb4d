/**
 * The benchmark's Redis: a redis-server of its own on a free port (isolated memory figures, FLUSHALL
 * allowed), or the one at BENCH_REDIS_URL when set (then everything stays under the run's prefix).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sleep } from './stats.js';

export interface BenchRedis {
  url: string;
  port: number;
  /** True when this run started the server (FLUSHALL and memory figures are safe). */
  own: boolean;
  version: string;
  stop(): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

function ping(port: number, host = '127.0.0.1', timeoutMs = 300): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (d) => done(d.toString().startsWith('+PONG')));
  });
}

function serverVersion(): string {
  try {
    return /v=(\S+)/.exec(execFileSync('redis-server', ['--version'], { encoding: 'utf8' }))?.[1] ?? 'unknown';
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
  const dir = mkdtempSync(join(tmpdir(), 'flight-bench-redis-'));
  const port = await freePort();
  const pidfile = join(dir, 'redis.pid');
  execFileSync('redis-server', [
    '--port', String(port), '--bind', '127.0.0.1', '--daemonize', 'yes', '--pidfile', pidfile,
    '--logfile', join(dir, 'log'), '--dir', dir, '--save', '', '--appendonly', 'no',
    '--maxclients', '20000', '--hz', '10',
  ]);
  for (let i = 0; i < 200 && !(await ping(port)); i++) await sleep(25);
  if (!(await ping(port))) throw new Error(`redis-server on port ${port} did not start (see ${dir}/log)`);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    own: true,
    version: serverVersion(),
    async stop() {
      try {
        const pid = existsSync(pidfile) ? Number(readFileSync(pidfile, 'utf8').trim()) : 0;
        if (pid > 0) {
          process.kill(pid, 'SIGTERM');
          for (let i = 0; i < 100; i++) {
            try {
              process.kill(pid, 0);
              await sleep(20);
            } catch {
              break;
            }
          }
        }
      } catch {
        /* already gone */
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
