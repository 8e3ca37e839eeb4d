/**
 * Cross-process test support shared by the Express and Koa cluster tests: start a server fixture in its
 * own Node process (TypeScript through tsx, `@flight/*` resolved to source by the `@flight/source` condition),
 * stop them all, fire a burst of identical requests, and delete a test's keys by prefix.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { get as httpGet } from 'node:http';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

export interface ServerProcess {
  child: ChildProcess;
  url: string;
}

/** Starts `fixture` (which sends `{ port }` over IPC once listening). */
export function startServerProcess(fixture: string, options: { cwd: string; env: Record<string, string> }) {
  const child = fork(fixture, [], {
    cwd: options.cwd,
    execArgv: ['--conditions=@flight/source', '--import', 'tsx'],
    env: { ...process.env, ...options.env },
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
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        }),
    ),
  );
}

/**
 * Sends `count` concurrent GETs of `path`, round-robin over `servers`, all for one `Host` as behind a load
 * balancer (node:http: fetch cannot set `Host`), plus `headers`.
 */
export function burst(servers: readonly ServerProcess[], path: string, count: number, headers: Record<string, string> = {}) {
  return Promise.all(
    Array.from(
      { length: count },
      (_, i) =>
        new Promise<{ node: number; status: number; body: string; role: string | null; cookie: string | null }>((resolve, reject) => {
          const node = i % servers.length;
          const req = httpGet(`${servers[node]!.url}${path}`, { headers: { host: 'app.example', ...headers } }, (res) => {
            let body = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => (body += chunk));
            res.on('end', () => {
              const role = res.headers['x-flight-role'];
              const cookie = res.headers['set-cookie'];
              resolve({
                node,
                status: res.statusCode!,
                body,
                role: typeof role === 'string' ? role : null,
                cookie: cookie ? cookie.join(', ') : null,
              });
            });
            res.on('error', reject);
          });
          req.on('error', reject);
        }),
    ),
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

export interface ServerFixture {
  fixture: string;
  cwd: string;
}

/**
 * The cross-process burst: start one process per fixture behind the same Redis, send `requests` identical
 * GETs round-robin, and check the handler ran once (a Redis INCR by the fixture), every answer has the same
 * status and body, one owner and the rest followers, and only the owner's client got its Set-Cookie.
 */
export function describeClusterBurst(name: string, servers: readonly ServerFixture[], requests: number): void {
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const prefix = `flight-test:${name.replace(/\W+/g, '-')}:${randomBytes(4).toString('hex')}`;

  describe(name, () => {
    const nodes: ServerProcess[] = [];
    let redis: Redis;

    beforeAll(async () => {
      redis = new Redis(redisUrl);
      const env = { REDIS_URL: redisUrl, FLIGHT_PREFIX: prefix, EXPECTED: String(requests) };
      nodes.push(...(await Promise.all(servers.map((s) => startServerProcess(s.fixture, { ...s, env })))));
    });

    afterAll(async () => {
      await stopServerProcesses(nodes);
      await deleteByPrefix(redis, prefix);
      await redis.quit();
    });

    it(`${requests} concurrent identical requests split across ${servers.length} servers run the handler once`, async () => {
      const answers = await burst(nodes, '/report', requests);
      expect(Number(await redis.get(`${prefix}:calls`))).toBe(1);
      expect(new Set(answers.map((a) => a.status))).toEqual(new Set([200]));
      expect(new Set(answers.map((a) => a.body)).size).toBe(1);
      const owners = answers.filter((a) => a.role === 'owner');
      expect(owners).toHaveLength(1);
      // The owner's handler answers once every request has reached its server, so the other requests on the
      // owner's server join its run there. A request on another server reaches the flight a moment after it
      // arrived: it follows the run, or (its process held up past the run's end on a busy machine) is
      // answered by the stored response or this node's copy of it; either way it did not run the handler, and it is never an owner.
      const owner = owners[0]!;
      for (const answer of answers) {
        if (answer === owner) continue;
        expect(answer.node === owner.node ? ['follower'] : ['follower', 'replay', 'l1']).toContain(answer.role);
      }
      // Only the owner's own client gets its Set-Cookie.
      expect(answers.filter((a) => a.cookie !== null)).toHaveLength(1);
    });

    it(`an error response is not replayed: after a burst whose run failed (503), the next burst across ${servers.length} servers runs the handler at most once`, async () => {
      const size = 20;
      const first = await burst(nodes, '/flaky', size, { 'x-burst': 'f1', 'x-expect': String(size) });
      expect(first.filter((a) => a.role === 'owner' && a.status === 503)).toHaveLength(1);
      const before = Number(await redis.get(`${prefix}:flaky-calls`));
      const second = await burst(nodes, '/flaky', size, { 'x-burst': 'f2', 'x-expect': String(size) });
      // Once, or not at all when the recovery run of the first burst (a follower on another node that took
      // over the failed flight) was already shared; never once per request, as a replayed failure would make it.
      expect(Number(await redis.get(`${prefix}:flaky-calls`)) - before).toBeLessThanOrEqual(1);
      expect(new Set(second.map((a) => a.status))).toEqual(new Set([200]));
      expect(new Set(second.map((a) => a.body)).size).toBe(1);
    });
  });
}
