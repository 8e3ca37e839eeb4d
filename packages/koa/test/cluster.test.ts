/**
 * Two Koa processes and one Express process behind the same Redis: 60 concurrent identical requests
 * split across them run the handler once, and all 60 answers carry the same status and body.
 */
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { burst, deleteByPrefix, startServerProcess, stopServerProcesses, type ServerProcess } from '../../http-shared/test/cluster-harness.js';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const koa = { fixture: here('./fixtures/cluster-server.ts'), cwd: here('..'), tsconfig: here('./fixtures/tsconfig.json') };
const express = {
  fixture: here('../../express/test/fixtures/cluster-server.ts'),
  cwd: here('../../express'),
  tsconfig: here('../../express/test/fixtures/tsconfig.json'),
};
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `flight-test:koa-cluster:${randomBytes(4).toString('hex')}`;
const REQUESTS = 60;

describe('koa (two processes) and express (one) over the same Redis', () => {
  const nodes: ServerProcess[] = [];
  let redis: Redis;

  beforeAll(async () => {
    redis = new Redis(redisUrl);
    const env = { REDIS_URL: redisUrl, FLIGHT_PREFIX: prefix, EXPECTED: String(REQUESTS) };
    nodes.push(...(await Promise.all([koa, koa, express].map((s) => startServerProcess(s.fixture, { ...s, env })))));
  });

  afterAll(async () => {
    await stopServerProcesses(nodes);
    await deleteByPrefix(redis, prefix);
    await redis.quit();
  });

  it('60 concurrent identical requests split across three servers of two frameworks run the handler once', async () => {
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
