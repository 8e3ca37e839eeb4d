/**
 * The wrapper across real processes: 3 app server processes, each with 100 callers making the same
 * model call at once, through each Redis adapter, on the shared server and on a Redis Cluster — one
 * upstream call, the SDK's types and the same answer everywhere, chat JSON and streamed, and Responses.
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { startFakeModel, type FakeModel } from '@flight/fake-model';
import { deleteKeys, sharedRedisUrl, startLineProcess, startRedisCluster, type RedisCluster } from '@flight/test-servers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

interface CallerResult {
  ok: boolean;
  role?: string;
  text?: string;
  sdkType?: boolean;
  error?: string;
}

interface AppNode {
  send(api: string, body: unknown, callers: number): Promise<CallerResult[]>;
  stop(): Promise<void>;
}

const fixture = fileURLToPath(new URL('./fixtures/openai-node.ts', import.meta.url));

async function startNode(config: Record<string, unknown>): Promise<AppNode> {
  const node = await startLineProcess<{ results: CallerResult[] }>(fixture, {
    env: { FLIGHT_NODE: JSON.stringify(config) },
    // Where tsx and the fixture's imports resolve: this package.
    cwd: fileURLToPath(new URL('..', import.meta.url)),
  });
  return { send: async (api, body, callers) => (await node.request({ api, body, callers })).results, stop: () => node.stop() };
}

let model: FakeModel;
beforeAll(async () => {
  model = await startFakeModel({ port: 0, latencyMs: 5, tokensPerSecond: 200 });
});
afterAll(async () => {
  await model?.close();
});

for (const adapter of ['ioredis', 'node-redis'] as const)
  for (const target of ['standalone', 'cluster'] as const)
    describe(`${adapter} (${target}): 3 app processes × 100 callers`, () => {
      const prefix = `flight-openai-cluster-${randomUUID().slice(0, 8)}`;
      let cluster: RedisCluster | undefined;
      let nodes: AppNode[] = [];
      beforeAll(async () => {
        if (target === 'cluster') cluster = await startRedisCluster({ masters: 3 });
        nodes = await Promise.all(
          ['a', 'b', 'c'].map((nodeId) =>
            startNode({ adapter, redisUrl: sharedRedisUrl(), cluster: cluster?.masters, prefix, nodeId, modelUrl: model.url }),
          ),
        );
      }, 60_000);
      afterAll(async () => {
        await Promise.all(nodes.map((n) => n.stop()));
        if (cluster) await cluster.stop();
        else await deleteKeys(sharedRedisUrl(), `${prefix}*`);
      }, 30_000);

      const burst = async (api: string, body: unknown) => {
        const before = model.stats().calls;
        const results = (await Promise.all(nodes.map((n) => n.send(api, body, 100)))).flat();
        return { results, upstream: model.stats().calls - before };
      };
      const check = (results: CallerResult[]) => {
        expect(results.filter((r) => !r.ok)).toEqual([]);
        expect(results.every((r) => r.sdkType)).toBe(true);
        expect(new Set(results.map((r) => r.text)).size).toBe(1);
        expect(results.filter((r) => r.role === 'owner')).toHaveLength(1);
        expect(results.filter((r) => r.role === 'follower').length + 1).toBe(300);
      };

      it('chat completions: 300 identical calls → 1 upstream call', async () => {
        const body = { model: 'fake-model', messages: [{ role: 'user', content: `[latency:300] ${randomUUID()}` }], temperature: 0 };
        const { results, upstream } = await burst('chat', body);
        expect(upstream).toBe(1);
        check(results);
      }, 30_000);

      it('stream: true: 300 identical streamed calls → 1 upstream call, every caller the whole text', async () => {
        const body = {
          model: 'fake-model',
          messages: [{ role: 'user', content: `[format:text] [latency:300] ${randomUUID()}` }],
          temperature: 0,
          stream: true,
        };
        const { results, upstream } = await burst('chat', body);
        expect(upstream).toBe(1);
        check(results);
        expect(results[0]!.text!.length).toBeGreaterThan(20);
      }, 30_000);

      it('responses: 300 identical calls → 1 upstream call', async () => {
        const { results, upstream } = await burst('responses', {
          model: 'fake-model',
          input: `[latency:300] ${randomUUID()}`,
          temperature: 0,
        });
        expect(upstream).toBe(1);
        check(results);
      }, 30_000);
    });
