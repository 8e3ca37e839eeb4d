/**
 * Cross-process test support shared by the Express and Koa cluster tests: start a server fixture in its
 * own Node process (TypeScript through tsx, `@flight/*` mapped to source by the fixture's tsconfig),
 * stop them all, fire a burst of identical requests, and delete a test's keys by prefix.
 */
import { fork, type ChildProcess } from 'node:child_process';

export interface ServerProcess {
  child: ChildProcess;
  url: string;
}

/** Starts `fixture` (which sends `{ port }` over IPC once listening). */
export function startServerProcess(fixture: string, options: { cwd: string; tsconfig: string; env: Record<string, string> }) {
  const child = fork(fixture, [], {
    cwd: options.cwd,
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, ...options.env, TSX_TSCONFIG_PATH: options.tsconfig },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise<ServerProcess>((resolve, reject) => {
    child.once('message', (message: { port: number }) => resolve({ child, url: `http://127.0.0.1:${message.port}` }));
    child.once('exit', (code) => reject(new Error(`server process exited with ${code}`)));
    child.once('error', reject);
  });
}

/** SIGTERMs every process and waits for it to exit. */
export function stopServerProcesses(servers: readonly ServerProcess[]): Promise<void[]> {
  return Promise.all(
    servers.map(
      ({ child }) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        }),
    ),
  );
}

/** Sends `count` concurrent GETs of `path`, round-robin over `servers`. */
export function burst(servers: readonly ServerProcess[], path: string, count: number) {
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const response = await fetch(`${servers[i % servers.length]!.url}${path}`);
      return {
        status: response.status,
        body: await response.text(),
        role: response.headers.get('x-flight-role'),
        cookie: response.headers.get('set-cookie'),
      };
    }),
  );
}

/** The two commands of an ioredis client that the cleanup uses. */
interface KeyScanner {
  scan(cursor: string, match: 'MATCH', pattern: string, count: 'COUNT', n: number): Promise<[string, string[]]>;
  del(...keys: string[]): Promise<number>;
}

/** Deletes every key under `prefix`. */
export async function deleteByPrefix(redis: KeyScanner, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    if (keys.length) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}
