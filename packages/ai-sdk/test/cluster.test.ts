/**
 * The middleware across real processes: 3 app server processes, each with 100 callers making the same
 * AI SDK call at once (the OpenAI-compatible provider against the fake model, over HTTP), through each
 * Redis adapter — one upstream call and the same answer everywhere, for `generateText` and `streamText`;
 * sampled calls kept apart; a provider error replayed as `APICallError`; a caller's abort isolated.
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { startFakeModel, type FakeModel } from '@flight/fake-model';
import { deleteKeys, scanKeysWithoutTtl, sharedRedisUrl, startLineProcess } from '@flight/test-servers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

interface CallerResult {
  ok: boolean;
  role?: string;
  text?: string;
  tokens?: number;
  aborted?: boolean;
  error?: string;
  apiCallError?: boolean;
  status?: number;
  message?: string;
}

interface Burst {
  op: 'generate' | 'stream';
  prompt: string;
  callers: number;
  settings?: Record<string, unknown>;
  abortCallers?: number;
}

interface AppNode {
  send(burst: Burst): Promise<CallerResult[]>;
  stop(): Promise<void>;
}

const fixture = fileURLToPath(new URL('./fixtures/ai-node.ts', import.meta.url));

async function startNode(config: Record<string, unknown>): Promise<AppNode> {
  const node = await startLineProcess<{ results: CallerResult[] }>(fixture, {
    env: { FLIGHT_NODE: JSON.stringify(config) },
    cwd: fileURLToPath(new URL('..', import.meta.url)),
  });
  return { send: async (burst) => (await node.request({ ...burst })).results, stop: () => node.stop() };
}

let model: FakeModel;
beforeAll(async () => {
  model = await startFakeModel({ port: 0, latencyMs: 5, tokensPerSecond: 200 });
});
afterAll(async () => {
  await model?.close();
});

for (const adapter of ['ioredis', 'node-redis'] as const)
  describe(`${adapter}: 3 app processes × 100 callers through wrapLanguageModel`, () => {
    const prefix = `flight-ai-sdk-${adapter}-${randomUUID().slice(0, 8)}`;
    let nodes: AppNode[] = [];
    beforeAll(async () => {
      nodes = await Promise.all(
        ['a', 'b', 'c'].map((nodeId) => startNode({ adapter, redisUrl: sharedRedisUrl(), prefix, nodeId, modelUrl: model.url })),
      );
    }, 60_000);
    afterAll(async () => {
      await Promise.all(nodes.map((n) => n.stop()));
      expect(await scanKeysWithoutTtl(sharedRedisUrl(), `${prefix}*`)).toEqual([]);
      await deleteKeys(sharedRedisUrl(), `${prefix}*`);
    }, 30_000);

    const burst = async (command: Burst, on: AppNode[] = nodes) => {
      const before = model.stats().calls;
      const results = (await Promise.all(on.map((n) => n.send(command)))).flat();
      return { results, upstream: model.stats().calls - before };
    };
    const shared = (results: CallerResult[]) => {
      expect(results.filter((r) => !r.ok)).toEqual([]);
      expect(new Set(results.map((r) => r.text)).size).toBe(1);
      expect(results[0]!.text!.length).toBeGreaterThan(20);
      expect(results.filter((r) => r.role === 'owner')).toHaveLength(1);
      expect(results.filter((r) => r.role === 'follower')).toHaveLength(results.length - 1);
      // Every caller's result reports the usage of the one call.
      expect(new Set(results.map((r) => r.tokens)).size).toBe(1);
      expect(results[0]!.tokens).toBeGreaterThan(0);
    };

    it('generateText: 300 identical calls → 1 upstream call, every caller the same text and usage', async () => {
      const { results, upstream } = await burst({ op: 'generate', prompt: `[format:text] [latency:300] ${randomUUID()}`, callers: 100 });
      expect(upstream).toBe(1);
      expect(results).toHaveLength(300);
      shared(results);
    });

    it('streamText: 300 identical streamed calls → 1 upstream call, every caller the whole text in order', async () => {
      const { results, upstream } = await burst({ op: 'stream', prompt: `[format:text] [latency:300] ${randomUUID()}`, callers: 100 });
      expect(upstream).toBe(1);
      shared(results);
      // The same text a call made alone gets (the fake model is deterministic for a prompt).
    });

    it('sampled calls without a seed are not shared; with a seed they are', async () => {
      const prompt = `[format:text] ${randomUUID()}`;
      const sampled = await burst({ op: 'generate', prompt, callers: 4, settings: { temperature: 0.7 } });
      expect(sampled.upstream).toBe(12);
      expect(sampled.results.every((r) => r.ok && r.role === 'unshared')).toBe(true);
      const seeded = await burst({
        op: 'generate',
        prompt: `[latency:300] ${prompt}`,
        callers: 4,
        settings: { temperature: 0.7, seed: 7 },
      });
      expect(seeded.upstream).toBe(1);
      expect(seeded.results.filter((r) => r.role === 'owner')).toHaveLength(1);
    });

    it("a provider error reaches every caller on every node as the SDK's APICallError, with its status; a 4xx is kept, a 5xx or a 429 is not", async () => {
      const prompt400 = `[fail:400] [latency:300] ${randomUUID()}`;
      const { results, upstream } = await burst({ op: 'generate', prompt: prompt400, callers: 100 });
      expect(upstream).toBe(1);
      expect(results.every((r) => !r.ok && r.apiCallError && r.status === 400)).toBe(true);
      // A 4xx (the call's own fault) is kept for the failure's TTL: a later caller on another node gets it without a call.
      const later = await burst({ op: 'generate', prompt: prompt400, callers: 1 }, [nodes[2]!]);
      expect(later.upstream).toBe(0);
      expect(later.results[0]).toMatchObject({ ok: false, apiCallError: true, status: 400 });
      const prompt500 = `[fail:500] [latency:300] ${randomUUID()}`;
      const streamed = await burst({ op: 'stream', prompt: prompt500, callers: 20 });
      expect(streamed.results.every((r) => !r.ok && r.apiCallError && r.status === 500)).toBe(true);
      // A 5xx is not kept: the next caller calls the model again (and again on the stage's retry policy).
      const again = await burst({ op: 'stream', prompt: prompt500, callers: 1 }, [nodes[0]!]);
      expect(again.upstream).toBeGreaterThanOrEqual(1);
      expect(again.results[0]).toMatchObject({ ok: false, apiCallError: true, status: 500 });
      const prompt429 = `[fail:429] ${randomUUID()}`;
      for (let i = 0; i < 2; i++) {
        const limited = await burst({ op: 'generate', prompt: prompt429, callers: 1 }, [nodes[i]!]);
        expect(limited.upstream).toBeGreaterThanOrEqual(1);
        expect(limited.results[0]).toMatchObject({ ok: false, apiCallError: true, status: 429 });
      }
    });

    it("a caller's abort leaves only that caller: the others on its node and elsewhere get the whole answer of one call", async () => {
      const prompt = `[format:text] [latency:200] [tokens-per-sec:40] ${randomUUID()}`;
      const [a, b, c] = nodes as [AppNode, AppNode, AppNode];
      const before = model.stats().calls;
      // Node A's first 10 callers (the owner's caller among them) abort after their first text.
      const [onA, onB, onC] = await Promise.all([
        a.send({ op: 'stream', prompt, callers: 30, abortCallers: 10 }),
        b.send({ op: 'stream', prompt, callers: 30 }),
        c.send({ op: 'stream', prompt, callers: 30 }),
      ]);
      expect(model.stats().calls - before).toBe(1);
      const aborted = onA.filter((r) => r.aborted);
      expect(aborted).toHaveLength(10);
      const whole = [...onA.filter((r) => !r.aborted), ...onB, ...onC];
      expect(whole).toHaveLength(80);
      expect(whole.filter((r) => !r.ok)).toEqual([]);
      expect(new Set(whole.map((r) => r.text)).size).toBe(1);
      expect(whole[0]!.text!.length).toBeGreaterThan(20);
    });
  });
