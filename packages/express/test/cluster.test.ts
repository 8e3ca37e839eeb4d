/**
 * Two server processes behind the same Redis: 50 concurrent identical requests split across both run
 * the handler once, and all 50 answers carry the same status and body.
 */
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { burst, deleteByPrefix, startServerProcess, stopServerProcesses, type ServerProcess } from '../../http-shared/test/cluster-harness.js';

const fixture = fileURLToPath(new URL('./fixtures/cluster-server.ts', import.meta.url));
const tsconfig = fileURLToPath(new URL('./fixtures/tsconfig.json', import.meta.url));
const cwd = fileURLToPath(new URL('..', import.meta.url));
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `flight-test:express-cluster:${randomBytes(4).toString('hex')}`;
const REQUESTS = 50;

describe('express across two processes over Redis', () => {
  const nodes: ServerProcess[] = [];
  let redis: Redis;

  beforeAll(async () => {
    redis = new Redis(redisUrl);
    const env = { REDIS_URL: redisUrl, FLIGHT_PREFIX: prefix, EXPECTED: String(REQUESTS) };
    nodes.push(...(await Promise.all([0, 1].map(() => startServerProcess(fixture, { cwd, tsconfig, env })))));
  });

  afterAll(async () => {
    await stopServerProcesses(nodes);
    await deleteByPrefix(redis, prefix);
    await redis.quit();
  });

  it('50 concurrent identical requests split across both servers run the handler once', async () => {
    const answers = await burst(nodes, '/report', REQUESTS);
    expect(Number(await redis.get(`${prefix}:calls`))).toBe(1);
    expect(new Set(answers.map((a) => a.status))).toEqual(new Set([200]));
    expect(new Set(answers.map((a) => a.body)).size).toBe(1);
    expect(answers.filter((a) => a.role === 'owner')).toHaveLength(1);
    expect(answers.filter((a) => a.role === 'follower')).toHaveLength(REQUESTS - 1);
    // Only the owner's own client gets its Set-Cookie.
    expect(answers.filter((a) => a.cookie !== null)).toHaveLength(1);
  });
});
