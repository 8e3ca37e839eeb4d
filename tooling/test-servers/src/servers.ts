/**
 * Real Redis servers for tests that must break Redis (kill, pause, restart) or need a cluster:
 * each starts from the `redis-server` binary (or another, e.g. a valkey-server, see `binary`) on free
 * ports, in a temp dir, and stops by its pid.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { rawCommand } from './resp';

const run = promisify(execFile);
/** Resolves after `ms` milliseconds: Node's promise timer, the testing helpers' one sleep. */
export { sleep };

/** A free TCP port on 127.0.0.1 (and, when `plusBus`, port + 10000 free too for the cluster bus). */
export async function freePort(plusBus = false): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = net.createServer();
      server.listen(0, '127.0.0.1', () => {
        const address = server.address() as net.AddressInfo;
        server.close(() => resolve(address.port));
      });
      server.on('error', reject);
    });
    if (!plusBus || (port + 10000 <= 65535 && (await isFree(port + 10000)))) return port;
  }
  throw new Error('no free port');
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A server could not bind its port (or its cluster bus port): another process took it after it was picked. */
export class PortTakenError extends Error {
  readonly code = 'E_TEST_PORT_TAKEN';
  constructor(
    readonly port: number,
    /** The server's own account of it (its log line). */
    readonly detail: string,
  ) {
    super(`port ${port} was taken before the server could bind it: ${detail}`);
    this.name = 'PortTakenError';
  }
}

/** What a Redis or Valkey server logs when it cannot bind a port. */
const BIND_FAILED = /Address already in use|Could not create server TCP listening socket|Failed listening on port/;

/** Throws `PortTakenError` when the server logging to `logfile` could not bind `port`. */
function checkBound(port: number, logfile: string | undefined): void {
  if (!logfile || !existsSync(logfile)) return;
  const line = readFileSync(logfile, 'utf8')
    .split('\n')
    .find((entry) => BIND_FAILED.test(entry));
  if (line) throw new PortTakenError(port, line.trim());
}

/** Attempts of `onFreePorts` before a taken port is the caller's error. */
const PORT_ATTEMPTS = 5;

/**
 * Runs `start` on `count` distinct free ports (each with its cluster bus port free too, when `plusBus`) and,
 * when it fails with `PortTakenError`, again on fresh ones (up to 5 attempts): a picked port is free only
 * when it is picked, and any process may take it before the server binds it (an outbound connection's
 * local port is enough). `start` must leave nothing running when it fails.
 */
export async function onFreePorts<T>(count: number, start: (ports: number[]) => Promise<T>, plusBus = false): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const ports: number[] = [];
    while (ports.length < count) {
      const port = await freePort(plusBus);
      if (!ports.includes(port)) ports.push(port);
    }
    try {
      return await start(ports);
    } catch (error) {
      if (!(error instanceof PortTakenError) || attempt === PORT_ATTEMPTS) throw error;
    }
  }
}

/**
 * Resolves once the server on `port` answers PING; the bound only catches one that never will (a loaded
 * machine starts them slowly). With the server's `logfile`, a server that could not bind its port fails at
 * once with `PortTakenError`.
 */
export async function waitForPing(port: number, binary: string, timeoutMs = 30_000, logfile?: string): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    checkBound(port, logfile);
    try {
      const reply = await rawCommand(port, ['PING'], '127.0.0.1', 500);
      // A server started with --requirepass answers NOAUTH: it is up.
      if (reply === 'PONG' || (reply instanceof Error && reply.message.startsWith('NOAUTH'))) return;
    } catch {
      // not up yet
    }
    if (Date.now() > until) throw new Error(`${basename(binary)} on ${port} did not answer PING`);
    await sleep(20);
  }
}

export interface RedisServer {
  readonly host: string;
  readonly port: number;
  readonly url: string;
  /** The server's pid (for SIGSTOP/SIGCONT/SIGKILL). */
  readonly pid: number;
  /** Sends a command through a one-shot raw connection. */
  command(...args: (string | number)[]): ReturnType<typeof rawCommand>;
  /** Stops the server (SIGKILL; data is not kept). */
  stop(): Promise<void>;
  /** Starts it again on the same port (empty). */
  restart(): Promise<void>;
}

export interface StartRedisServerOptions {
  /** Extra `redis-server` arguments, e.g. `['--maxmemory', '3mb']`. */
  args?: string[];
  /** @default a free port */
  port?: number;
  /**
   * The server binary, a name on PATH or a path: any server that takes `redis-server`'s arguments, e.g. a
   * valkey-server (see `startValkeyServer`). @default 'redis-server'
   */
  binary?: string;
}

const BASE_ARGS = ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--enable-debug-command', 'local'];

/**
 * Starts a daemonized server on `port` and resolves its pid once it answers PING; `PortTakenError` when it
 * could not bind the port (it exited; another process answering there is not taken for it).
 */
export async function daemonize(dir: string, port: number, binary: string, args: string[]): Promise<number> {
  const pidfile = join(dir, `redis-${port}.pid`);
  const logfile = join(dir, `redis-${port}.log`);
  rmSync(pidfile, { force: true });
  rmSync(logfile, { force: true });
  await run(binary, [
    '--port',
    String(port),
    '--daemonize',
    'yes',
    '--pidfile',
    pidfile,
    '--logfile',
    logfile,
    '--dir',
    dir,
    ...BASE_ARGS,
    ...args,
  ]);
  return await startedServer(port, binary, pidfile, logfile);
}

/** The pid of the server started on `port` with `pidfile` and `logfile`, once it answers PING (see `daemonize`). */
export async function startedServer(port: number, binary: string, pidfile: string, logfile: string): Promise<number> {
  await waitForPing(port, binary, undefined, logfile);
  // The server writes its pidfile as it starts; on a loaded machine that may come a little after it answers.
  for (let i = 0; i < 500 && !existsSync(pidfile); i++) await sleep(10);
  checkBound(port, logfile);
  if (!existsSync(pidfile)) throw new Error(`${basename(binary)} on ${port} answers but wrote no pidfile (${pidfile})`);
  return Number(readFileSync(pidfile, 'utf8').trim());
}

export async function kill(pid: number): Promise<void> {
  try {
    process.kill(pid, 'SIGCONT');
    process.kill(pid, 'SIGKILL');
  } catch {
    return;
  }
  for (let i = 0; i < 200; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await sleep(10);
  }
}

/** Starts a standalone `redis-server` (or `options.binary`) of the test's own on a free port. */
export async function startRedisServer(options: StartRedisServerOptions = {}): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'flight-redis-'));
  const args = options.args ?? [];
  const binary = options.binary ?? 'redis-server';
  const start = async (port: number) => ({ port, pid: await daemonize(dir, port, binary, args) });
  const started = options.port === undefined ? await onFreePorts(1, ([port]) => start(port!)) : await start(options.port);
  const { port } = started;
  let { pid } = started;
  return {
    host: '127.0.0.1',
    port,
    url: `redis://127.0.0.1:${port}`,
    get pid() {
      return pid;
    },
    command: (...command) => rawCommand(port, command),
    async stop() {
      await kill(pid);
    },
    async restart() {
      await kill(pid);
      pid = await daemonize(dir, port, binary, args);
    },
  };
}

export interface RedisCluster {
  /** Master then replica nodes, as `{ host, port }`. */
  readonly nodes: { host: string; port: number; pid: number }[];
  /** The masters' addresses. */
  readonly masters: { host: string; port: number }[];
  stop(): Promise<void>;
}

export interface StartRedisClusterOptions {
  /** @default 3 */
  masters?: number;
  /** Replicas per master. @default 0 */
  replicas?: 0 | 1;
  /**
   * The nodes' server binary, as for `startRedisServer` (the cluster is still created with `redis-cli`,
   * which works with valkey-server nodes too). @default 'redis-server'
   */
  binary?: string;
}

/** Starts a local Redis Cluster (`redis-cli --cluster create`) on free ports and waits until every node reports `cluster_state:ok`. */
export async function startRedisCluster(options: StartRedisClusterOptions = {}): Promise<RedisCluster> {
  const masters = options.masters ?? 3;
  const replicas = options.replicas ?? 0;
  const binary = options.binary ?? 'redis-server';
  const count = masters * (1 + replicas);
  const dir = mkdtempSync(join(tmpdir(), 'flight-cluster-'));
  const nodes: { host: string; port: number; pid: number }[] = [];
  const stop = async () => {
    await Promise.all(nodes.map((node) => kill(node.pid)));
  };
  const clusterArgs = ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '1000'];
  try {
    while (nodes.length < count) {
      const node = await onFreePorts(
        1,
        async ([port]) => {
          const nodeDir = join(dir, String(port));
          await run('mkdir', ['-p', nodeDir]);
          const pid = await daemonize(nodeDir, port!, binary, [...clusterArgs, '--repl-diskless-sync-delay', '0']);
          return { host: '127.0.0.1', port: port!, pid };
        },
        true,
      );
      nodes.push(node);
    }
    const ports = nodes.map((node) => node.port);
    await run('redis-cli', [
      '--cluster',
      'create',
      ...ports.map((p) => `127.0.0.1:${p}`),
      '--cluster-replicas',
      String(replicas),
      '--cluster-yes',
    ]);
    const until = Date.now() + 20_000;
    for (const port of ports) {
      for (;;) {
        const info = await rawCommand(port, ['CLUSTER', 'INFO']);
        if (typeof info === 'string' && info.includes('cluster_state:ok')) break;
        if (Date.now() > until) throw new Error(`cluster node ${port} not ok`);
        await sleep(50);
      }
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    nodes,
    masters: nodes.slice(0, masters).map(({ host, port }) => ({ host, port })),
    stop,
  };
}
