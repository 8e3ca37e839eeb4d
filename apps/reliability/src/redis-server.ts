/**
 * A redis-server of the chaos run's own (no test framework needed): free port, temp dir, daemonized,
 * stopped by its pid. DEBUG is enabled for fault injection.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface OwnRedis {
  readonly port: number;
  readonly url: string;
  readonly pid: number;
  restart(): Promise<void>;
  stop(): Promise<void>;
  /** Sends one command on a fresh connection (inline protocol); resolves with the raw reply text. */
  command(...args: string[]): Promise<string>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

function send(port: number, args: string[], timeoutMs = 3000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('no reply'));
    }, timeoutMs);
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.on('connect', () => socket.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`));
    socket.on('data', (chunk) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(chunk.toString());
    });
  });
}

async function killPid(pid: number): Promise<void> {
  try {
    process.kill(pid, 'SIGCONT');
    process.kill(pid, 'SIGKILL');
  } catch {
    return;
  }
  for (let i = 0; i < 300; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await sleep(10);
  }
}

export async function startOwnRedis(): Promise<OwnRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'flight-chaos-'));
  const port = await freePort();
  const pidfile = join(dir, 'redis.pid');
  let pid = 0;
  const start = async () => {
    rmSync(pidfile, { force: true });
    await run('redis-server', [
      '--port', String(port), '--bind', '127.0.0.1', '--daemonize', 'yes', '--pidfile', pidfile, '--logfile', join(dir, 'redis.log'),
      '--dir', dir, '--save', '', '--appendonly', 'no', '--enable-debug-command', 'local',
    ]);
    for (let i = 0; i < 500; i++) {
      if (existsSync(pidfile) && (await send(port, ['PING'], 300).catch(() => '')).startsWith('+PONG')) break;
      await sleep(10);
    }
    pid = Number(readFileSync(pidfile, 'utf8').trim());
  };
  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    get pid() {
      return pid;
    },
    async restart() {
      await killPid(pid);
      await start();
    },
    async stop() {
      await killPid(pid);
      rmSync(dir, { recursive: true, force: true });
    },
    command: (...args) => send(port, args),
  };
}
