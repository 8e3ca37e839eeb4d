/**
 * Two Koa processes and one Express process behind the same Redis: 60 concurrent identical requests
 * split across them run the handler once, and all 60 answers carry the same status and body.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const koaFixture = fileURLToPath(new URL('./fixtures/cluster-server.ts', import.meta.url));
const expressFixture = fileURLToPath(new URL('../../express/test/fixtures/cluster-server.ts', import.meta.url));
const expressDir = fileURLToPath(new URL('../../express', import.meta.url));
const expressTsconfig = fileURLToPath(new URL('../../express/test/fixtures/tsconfig.json', import.meta.url));
const tsconfig = fileURLToPath(new URL('./fixtures/tsconfig.json', import.meta.url));
const packageDir = fileURLToPath(new URL('..', import.meta.url));
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `flight-test:koa-cluster:${randomBytes(4).toString('hex')}`;
const REQUESTS = 60;

function startNode(fixture: string, cwd: string, tsconfigPath: string): Promise<{ child: ChildProcess; url: string }> {
  const child = fork(fixture, [], {
    cwd,
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, REDIS_URL: redisUrl, FLIGHT_PREFIX: prefix, EXPECTED: String(REQUESTS), TSX_TSCONFIG_PATH: tsconfigPath },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('message', (message: { port: number }) => resolve({ child, url: `http://127.0.0.1:${message.port}` }));
    child.once('exit', (code) => reject(new Error(`server process exited with ${code}`)));
    child.once('error', reject);
  });
}

describe('koa (two processes) and express (one) over the same Redis', () => {
  const nodes: { child: ChildProcess; url: string }[] = [];
  let redis: Redis;

  beforeAll(async () => {
    redis = new Redis(redisUrl);
    nodes.push(
      ...(await Promise.all([
        startNode(koaFixture, packageDir, tsconfig),
        startNode(koaFixture, packageDir, tsconfig),
        startNode(expressFixture, expressDir, expressTsconfig),
      ])),
    );
  });

  afterAll(async () => {
    await Promise.all(
      nodes.map(
        ({ child }) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
          }),
      ),
    );
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      if (keys.length) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
    await redis.quit();
  });

  it('60 concurrent identical requests split across three servers of two frameworks run the handler once', async () => {
    const answers = await Promise.all(
      Array.from({ length: REQUESTS }, async (_, i) => {
        const response = await fetch(`${nodes[i % 3]!.url}/report`);
        return {
          status: response.status,
          body: await response.text(),
          role: response.headers.get('x-flight-role'),
          cookie: response.headers.get('set-cookie'),
        };
      }),
    );
    expect(Number(await redis.get(`${prefix}:calls`))).toBe(1);
    expect(new Set(answers.map((a) => a.status))).toEqual(new Set([200]));
    expect(new Set(answers.map((a) => a.body)).size).toBe(1);
    expect(answers.filter((a) => a.role === 'owner')).toHaveLength(1);
    expect(answers.filter((a) => a.role === 'follower')).toHaveLength(REQUESTS - 1);
    // Only the owner's own client gets its Set-Cookie.
    expect(answers.filter((a) => a.cookie !== null)).toHaveLength(1);
  });
});
