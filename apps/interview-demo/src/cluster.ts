/**
 * Starting and stopping the demo's processes (fake model, nodes, a private redis-server), shared by
 * `pnpm demo` and the end-to-end tests. Every child is a real process running the TypeScript sources
 * through tsx; every child is stopped when this process exits.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, openSync, closeSync } from 'node:fs';
import net from 'node:net';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { PORT_TAKEN_EXIT_CODE } from './port-taken.js';

/** A port free on loopback now (the OS picks it); another process may take it before a child listens on it. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export const APP_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');

const children = new Set<ChildProcess>();
let exitHookInstalled = false;
function track(child: ChildProcess) {
  children.add(child);
  child.once('exit', () => children.delete(child));
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => {
      for (const c of children) c.kill('SIGKILL');
    });
  }
}

/** True when a Redis server answers PING at `url` within `timeoutMs`. */
export function redisAnswers(url: string, timeoutMs = 700): Promise<boolean> {
  return new Promise((resolve) => {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return resolve(false);
    }
    const socket = net.connect({ host: parsed.hostname, port: Number(parsed.port || 6379) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => {
      if (parsed.password)
        socket.write(`AUTH ${parsed.username ? `${decodeURIComponent(parsed.username)} ` : ''}${decodeURIComponent(parsed.password)}\r\n`);
      socket.write('PING\r\n');
    });
    socket.on('data', (data) => done(data.toString().includes('+PONG')));
  });
}

/** A child could not listen: its port was taken between the parent choosing it and the child starting. */
export class PortTakenError extends Error {
  readonly code = 'E_DEMO_PORT_TAKEN';
  constructor(readonly url: string) {
    super(`${url}: the port was taken before the process could listen on it`);
    this.name = 'PortTakenError';
  }
}

/** Attempts of {@link onFreePorts} before a taken port is the caller's error. */
const PORT_ATTEMPTS = 5;

/**
 * Runs `start` on `count` distinct free ports and, when it fails with {@link PortTakenError}, again on
 * fresh ones (up to 5 attempts): `start` must leave nothing running when it fails.
 */
export async function onFreePorts<T>(
  count: number,
  start: (ports: number[]) => Promise<T>,
  pick: () => Promise<number> = freePort,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const ports: number[] = [];
    while (ports.length < count) {
      const port = await pick();
      if (!ports.includes(port)) ports.push(port);
    }
    try {
      return await start(ports);
    } catch (error) {
      if (!(error instanceof PortTakenError) || attempt === PORT_ATTEMPTS) throw error;
    }
  }
}

export async function waitForHttp(url: string, timeoutMs = 20_000, child?: ChildProcess): Promise<void> {
  const giveUpAt = Date.now() + timeoutMs;
  for (;;) {
    if (child?.exitCode === PORT_TAKEN_EXIT_CODE) throw new PortTakenError(url);
    if (child && child.exitCode !== null) throw new Error(`${url}: process exited with code ${child.exitCode} before answering`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
      if (res.ok) return;
    } catch {
      // not up yet
    }
    if (Date.now() > giveUpAt) throw new Error(`${url} did not answer within ${timeoutMs} ms`);
    await sleep(100);
  }
}

export interface Proc {
  name: string;
  url: string;
  port: number;
  child: ChildProcess;
  /** SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
  /** Sends a signal without waiting (SIGKILL for the crash tests). */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

function stdioFor(logFile: string | undefined): ['ignore', number | 'inherit' | 'ignore', number | 'inherit' | 'ignore'] {
  if (logFile === 'inherit') return ['ignore', 'inherit', 'inherit'];
  if (!logFile) return ['ignore', 'ignore', 'ignore'];
  mkdirSync(dirname(logFile), { recursive: true });
  const fd = openSync(logFile, 'w');
  return ['ignore', fd, fd];
}

function proc(name: string, url: string, port: number, child: ChildProcess): Proc {
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  return {
    name,
    url,
    port,
    child,
    async stop(graceMs = 3000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
    async kill(signal = 'SIGKILL') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      if (signal === 'SIGKILL' || signal === 'SIGTERM') await exited;
    },
  };
}

/** Runs a TypeScript entry of this app through tsx, with @flight/* resolved to their source (the `@flight/source` condition). */
function spawnTs(entry: string, env: Record<string, string>, logFile: string | undefined): ChildProcess {
  const stdio = stdioFor(logFile);
  const child = spawn(process.execPath, ['--conditions=@flight/source', '--import', 'tsx', join(APP_DIR, 'src', entry)], {
    cwd: APP_DIR,
    env: { ...process.env, FLIGHT_PARENT_PID: String(process.pid), ...env },
    stdio,
  });
  // The child holds its own copy of the log file descriptor.
  if (typeof stdio[1] === 'number') closeSync(stdio[1]);
  track(child);
  return child;
}

/** Starts the fake model on `options.port`, or on a free port (a fresh one if that is taken before it listens). */
export async function startModelProcess(
  options: { port?: number; latencyMs?: number; tokensPerSecond?: number; logFile?: string } = {},
): Promise<Proc & { baseUrl: string }> {
  const startOn = async (port: number) => {
    const env = {
      MODEL_PORT: String(port),
      MODEL_LATENCY_MS: String(options.latencyMs ?? 300),
      MODEL_TOKENS_PER_SEC: String(options.tokensPerSecond ?? 40),
    };
    const child = spawnTs('main-model.ts', env, options.logFile);
    const url = `http://127.0.0.1:${port}`;
    await waitForHttp(`${url}/healthz`, 20_000, child);
    return { ...proc('model', url, port, child), baseUrl: `${url}/v1` };
  };
  return options.port === undefined ? onFreePorts(1, ([port]) => startOn(port!)) : startOn(options.port);
}

export interface NodeProcessOptions {
  nodeId: string;
  port?: number;
  redisUrl: string;
  modelBaseUrl: string;
  mode?: 'distributed' | 'local' | 'hybrid';
  prefix?: string;
  heartbeatMs?: number;
  modelTimeoutMs?: number;
  logFile?: string;
  logLevel?: string;
  /** The other nodes' base URLs (the dashboard's cluster panel). */
  peers?: string[];
}

/** Starts one node on `options.port`, or on a free port (a fresh one if that is taken before it listens). */
export async function startNodeProcess(options: NodeProcessOptions): Promise<Proc> {
  if (options.port === undefined) return onFreePorts(1, ([port]) => startNodeProcess({ ...options, port }));
  const { port } = options;
  const child = spawnTs(
    'main-node.ts',
    {
      PORT: String(port),
      NODE_ID: options.nodeId,
      REDIS_URL: options.redisUrl,
      MODEL_BASE_URL: options.modelBaseUrl,
      FLIGHT_MODE: options.mode ?? 'hybrid',
      REDIS_PREFIX: options.prefix ?? 'flight:demo',
      FLIGHT_HEARTBEAT_MS: String(options.heartbeatMs ?? 1000),
      MODEL_TIMEOUT_MS: String(options.modelTimeoutMs ?? 30_000),
      LOG_LEVEL: options.logLevel ?? 'info',
      PEERS: (options.peers ?? []).join(','),
    },
    options.logFile,
  );
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/healthz`, 30_000, child);
  return proc(options.nodeId, url, port, child);
}

/** Starts `count` nodes on free ports, each told the others' URLs; all again on fresh ports if one finds its port taken. */
export async function startNodeProcesses(
  count: number,
  options: (index: number) => Omit<NodeProcessOptions, 'port' | 'peers'>,
): Promise<Proc[]> {
  return onFreePorts(count, async (ports) => {
    const urls = ports.map((port) => `http://127.0.0.1:${port}`);
    const started = await Promise.allSettled(
      ports.map((port, i) => startNodeProcess({ ...options(i), port, peers: urls.filter((_, j) => j !== i) })),
    );
    const nodes = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) {
      // One node failed to start: stop the ones that did, so nothing outlives the caller's error.
      await Promise.all(nodes.map((n) => n.stop()));
      throw failed.reason;
    }
    return nodes;
  });
}

/**
 * A private redis-server on a free port (for tests that stop Redis; never the shared one). Unlike the test
 * helpers' daemonized `startRedisServer` (servers.ts), it runs as a tracked child of this process, so it
 * dies with the demo (Ctrl-C included).
 */
export async function startRedisServer(options: { port?: number } = {}): Promise<Proc> {
  const port = options.port ?? (await freePort());
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  track(child);
  const url = `redis://127.0.0.1:${port}`;
  const giveUpAt = Date.now() + 10_000;
  while (!(await redisAnswers(url))) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with code ${child.exitCode}`);
    if (Date.now() > giveUpAt) throw new Error(`redis-server on ${port} did not answer`);
    await sleep(50);
  }
  return proc('redis', url, port, child);
}
