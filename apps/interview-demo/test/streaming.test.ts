/**
 * Streamed stages over real HTTP: the fake model + 3 node processes + Redis. Identical streamed requests
 * spread over the nodes make one model call, and every caller receives the same tokens, live.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countBy, modelStats, streamBurst, streamPost } from '../src/load.js';
import { readSse } from '../src/sse.js';
import { resetModel, startCluster, type TestCluster } from './helpers.js';

let cluster: TestCluster;
const session = `st-${Date.now().toString(36)}`;

beforeAll(async () => {
  cluster = await startCluster({ name: 'streaming', redisUrl: process.env.REDIS_URL!, latencyMs: 300, tokensPerSecond: 40 });
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
});

describe('streamed evaluation and follow-up', () => {
  it('300 identical streamed evaluations over 3 nodes: 1 model call, every caller gets the same tokens in steps', async () => {
    await resetModel(cluster.model);
    // The model waits 1.5 s before its first token (time for the 300 requests to reach the nodes), then
    // streams 10 tokens/s: about 4 s, long against the stalls of a loaded machine.
    const body = {
      questionNumber: 2,
      question: 'What is a fencing token?',
      answer: 'An epoch that only grows; stale writers are refused. [latency:1500] [tokens-per-sec:10]',
    };
    const responses = await streamBurst(cluster.urls, `/api/sessions/${session}/evaluation/stream`, body, 300);

    expect(countBy(responses, (r) => String(r.status))).toEqual({ 200: 300 });
    expect(responses.filter((r) => r.error)).toEqual([]);
    const stats = await modelStats(cluster.model.url);
    expect(stats).toMatchObject({ calls: 1, streamed: 1 });
    // The same text, cut in the same chunks, for every caller; the done event's text is what they received.
    expect(new Set(responses.map((r) => r.text)).size).toBe(1);
    expect(new Set(responses.map((r) => r.chunkMs.length)).size).toBe(1);
    expect(responses.every((r) => r.done.text === r.text)).toBe(true);
    expect(responses[0]!.text).toMatch(/^Score \d+\/100/);
    // Live: the callers' chunks arrive in steps over the model's stream, not at once at the end, on every
    // node. A request that reached its node late catches up at once, then follows live; one that arrived
    // after the end gets everything at once (on a shared machine, 300 streams can be slow to open).
    expect(responses[0]!.chunkMs.length).toBeGreaterThan(20);
    const inSteps = (r: (typeof responses)[number]) =>
      new Set(r.chunkMs.map((ms) => Math.floor(ms / 100))).size >= 5 && r.chunkMs.at(-1)! - r.firstChunkMs! >= 1000;
    const live = responses.filter(inSteps);
    expect(live.length).toBeGreaterThan(150);
    expect(new Set(live.map((r) => r.node)).size).toBe(3);
    // One owner; the other callers followed it, on its node or another (or, arriving after the end, replayed it).
    const roles = countBy(responses, (r) => r.role ?? '?');
    expect(roles.owner).toBe(1);
    expect(roles.follower).toBeGreaterThan(200);
    expect(Object.keys(roles).every((role) => ['owner', 'follower', 'l1', 'replay'].includes(role))).toBe(true);
    expect(new Set(responses.map((r) => r.node)).size).toBe(3);
  });

  it('the same streamed request after completion is replayed, every chunk, without a model call', async () => {
    await resetModel(cluster.model);
    const body = { currentQuestion: 'q2', answer: 'Replay me.' };
    const path = `/api/sessions/${session}/follow-up/stream`;
    const first = await streamPost(`${cluster.urls[0]}${path}`, body);
    const again = await streamPost(`${cluster.urls[1]}${path}`, body);
    expect(first.role).toBe('owner');
    expect(again.role).toBe('replay');
    expect(again.text).toBe(first.text);
    expect(again.chunkMs.length).toBe(first.chunkMs.length);
    expect(again.text).toMatch(/^Follow-up #/);
    expect((await modelStats(cluster.model.url)).calls).toBe(1);
  });

  it('a failure before the first token is an HTTP error like the other routes (429 → 503, typed body)', async () => {
    const r = await streamPost(`${cluster.urls[2]}/api/sessions/${session}/evaluation/stream`, {
      questionNumber: 3,
      question: 'q',
      answer: 'x [fail:429]',
    });
    expect(r.status).toBe(503);
    expect(r.error.error).toMatchObject({ type: 'OVERLOAD' });
    expect(r.chunkMs).toEqual([]);
  });

  it("the model's stream cut after 5 tokens → those 5 chunks, then an error event (PROVIDER), status 200", async () => {
    const r = await streamPost(`${cluster.urls[1]}/api/sessions/${session}/evaluation/stream`, {
      questionNumber: 4,
      question: 'q',
      answer: 'x [cut-after:5]',
    });
    expect(r.status).toBe(200);
    expect(r.chunkMs).toHaveLength(5);
    expect(r.done).toBeNull();
    expect(r.error.error).toMatchObject({ code: 'E_MODEL_CONNECTION', type: 'PROVIDER' });
  });

  it('a client that goes away mid-stream detaches only itself: the other caller gets the whole text, the node lives on', async () => {
    await resetModel(cluster.model);
    const path = `/api/sessions/${session}/follow-up/stream`;
    const body = { currentQuestion: 'q5', answer: 'Leave early. [tokens-per-sec:5]' };
    const stays = streamPost(`${cluster.urls[0]}${path}`, body);
    const controller = new AbortController();
    const leaving = await fetch(`${cluster.urls[0]}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: controller.signal,
    });
    let chunks = 0;
    const read = (async () => {
      // Leaves at its first chunk (a busy node may batch several tokens into one chunk event).
      for await (const event of readSse(leaving.body!)) if (event.event === 'chunk' && ++chunks === 1) controller.abort();
    })();
    await expect(read).rejects.toThrow();
    expect(chunks).toBe(1);
    const r = await stays;
    expect(r.done).toMatchObject({ role: expect.stringMatching(/^(owner|follower)$/) });
    expect(r.text).toMatch(/^Follow-up #/);
    expect((await modelStats(cluster.model.url)).calls).toBe(1);
    expect((await fetch(`${cluster.urls[0]}/healthz`)).status).toBe(200);
  });

  it('bad input → 400 before any stream starts', async () => {
    const r = await streamPost(`${cluster.urls[0]}/api/sessions/${session}/evaluation/stream`, { questionNumber: 'one' });
    expect(r.status).toBe(400);
    expect(r.error.error.code).toBe('E_BAD_REQUEST');
  });
});

describe('resumable streams (@flight/resumable-stream, the way resumable-stream apps resume)', () => {
  it('a client that left after two events resumes on another node with resumeAt: the whole stream once, one model call; 422 once done, 404 for no stream', async () => {
    await resetModel(cluster.model);
    const streamId = `s-${Date.now().toString(36)}`;
    const path = `/api/sessions/${session}/evaluation/resumable/${streamId}`;
    const body = { questionNumber: 3, question: 'Why resume a stream?', answer: 'Connections drop. [latency:300] [tokens-per-sec:20]' };
    const leave = new AbortController();
    const first = await fetch(`${cluster.urls[0]}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: leave.signal,
    });
    expect(first.status).toBe(200);
    const reader = first.body!.getReader();
    const decoder = new TextDecoder();
    let got = '';
    while ((got.match(/\n\n/g) ?? []).length < 2) {
      const next = await reader.read();
      if (next.done) break;
      got += decoder.decode(next.value, { stream: true });
    }
    leave.abort();
    // On another node, after the characters this client has (an event may be cut in two: resumeAt counts characters).
    const resumed = await fetch(`${cluster.urls[1]}${path}?resumeAt=${got.length}`);
    expect(resumed.status).toBe(200);
    const whole = got + (await resumed.text());
    const events = whole.split('\n\n').filter(Boolean);
    expect(events.at(-1)).toBe('event: done\ndata: {}');
    const text = events
      .slice(0, -1)
      .map((event) => (JSON.parse(event.replace(/^data: /, '')) as { text: string }).text)
      .join('');
    expect(text).toMatch(/^Score \d+\/100/);
    expect(await modelStats(cluster.model.url)).toMatchObject({ calls: 1 });
    expect((await fetch(`${cluster.urls[2]}${path}`)).status).toBe(422);
    expect((await fetch(`${cluster.urls[2]}${path.replace(streamId, 'never-made')}`)).status).toBe(404);
  });
});
