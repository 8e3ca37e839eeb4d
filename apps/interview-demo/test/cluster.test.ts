/**
 * Fake model + 3 node processes + Redis, over real HTTP: one model call per logical request,
 * session locks on the heavy stages, no L1 for demeanor.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { burst, countBy, modelStats, post } from '../src/load.js';
import { metric, resetModel, startCluster, type TestCluster } from './helpers.js';

let cluster: TestCluster;
const session = `s-${Date.now().toString(36)}`;

beforeAll(async () => {
  cluster = await startCluster({ name: 'cluster', redisUrl: process.env.REDIS_URL!, latencyMs: 400 });
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
});

describe('300 concurrent identical requests spread over 3 nodes', () => {
  it('evaluation: the model is called once and all 300 answers are equal', async () => {
    await resetModel(cluster.model);
    const body = {
      questionNumber: 3,
      question: 'How does fencing work?',
      answer: 'Each owner gets an epoch; stale epochs are refused. [latency:1000]',
    };
    const responses = await burst(cluster.urls, `/api/sessions/${session}/evaluation`, body, 300);

    expect(countBy(responses, (r) => String(r.status))).toEqual({ 200: 300 });
    const stats = await modelStats(cluster.model.url);
    expect(stats.calls).toBe(1);
    expect(stats.byStage['interview-evaluation']).toBe(1);
    const answers = new Set(responses.map((r) => JSON.stringify(r.body.result)));
    expect(answers.size).toBe(1);
    expect(responses[0]!.body.result.answer).toHaveProperty('score');
    // Every node answered, and at least one node waited for another node's owner.
    expect(new Set(responses.map((r) => r.node)).size).toBe(3);
    const roles = countBy(responses, (r) => r.role ?? '?');
    expect(roles.follower ?? 0).toBeGreaterThan(0);
    expect(responses.every((r) => r.role && ['owner', 'follower', 'replay', 'l1'].includes(r.role))).toBe(true);
    // The metrics agree: 300 requests, 1 model call across the cluster.
    const requests = await Promise.all(
      cluster.urls.map((u) => metric(u, 'flight_executions_total', { flight_stage: 'interview-evaluation' })),
    );
    const calls = await Promise.all(cluster.urls.map((u) => metric(u, 'demo_model_calls_total', { flight_stage: 'interview-evaluation' })));
    expect(requests.reduce((a, b) => a + b)).toBe(300);
    expect(calls.reduce((a, b) => a + b)).toBe(1);
    // The library's own: one supplier run in the cluster, the 299 other requests saved an upstream call.
    const runs = await Promise.all(
      cluster.urls.map((u) => metric(u, 'flight_supplier_runs_total', { flight_stage: 'interview-evaluation' })),
    );
    const saved = await Promise.all(
      cluster.urls.map((u) => metric(u, 'flight_upstream_saved_total', { flight_stage: 'interview-evaluation' })),
    );
    expect(runs.reduce((a, b) => a + b)).toBe(1);
    expect(saved.reduce((a, b) => a + b)).toBe(299);
    // The owner's completion reported, cluster-wide, that the two other nodes had joined its run.
    const joined = await Promise.all(
      cluster.urls.map((u) => metric(u, 'demo_cluster_followers_sum', { flight_stage: 'interview-evaluation' })),
    );
    expect(joined.reduce((a, b) => a + b)).toBe(2);
  });

  it('follow-up: the model is called once and all 300 answers are equal', async () => {
    await resetModel(cluster.model);
    const body = { currentQuestion: 'q3', answer: 'Each owner gets an epoch; stale epochs are refused.' };
    const responses = await burst(cluster.urls, `/api/sessions/${session}/follow-up`, body, 300);

    expect(countBy(responses, (r) => String(r.status))).toEqual({ 200: 300 });
    expect((await modelStats(cluster.model.url)).calls).toBe(1);
    expect(new Set(responses.map((r) => JSON.stringify(r.body.result))).size).toBe(1);
    expect(responses[0]!.body.result.answer).toHaveProperty('question');
    expect(responses[0]!.body.key).toMatch(/^interview-followup:/);
  });

  it('a different answer is a different flight; the same answer again is replayed without a model call', async () => {
    await resetModel(cluster.model);
    const path = `/api/sessions/${session}/evaluation`;
    const a = await post(`${cluster.urls[0]}${path}`, { questionNumber: 4, question: 'q', answer: 'first answer' });
    const b = await post(`${cluster.urls[1]}${path}`, { questionNumber: 4, question: 'q', answer: 'second answer' });
    const again = await post(`${cluster.urls[2]}${path}`, { questionNumber: 4, question: 'q', answer: 'first answer' });
    expect([a.status, b.status, again.status]).toEqual([200, 200, 200]);
    expect(a.body.key).not.toBe(b.body.key);
    expect(again.role).toBe('replay');
    expect(again.body.result).toEqual(a.body.result);
    expect((await modelStats(cluster.model.url)).calls).toBe(2);
  });
});

describe('heavy stages: the session lock', () => {
  it('extraction: concurrent jobs of one session never overlap at the model; each file is extracted once', async () => {
    await resetModel(cluster.model);
    const sid = `${session}-x`;
    const files = ['a', 'b', 'c'].map((f) => `https://files.example/${sid}/resume-${f}.pdf`);
    const responses = (
      await Promise.all(files.map((fileUrl) => burst(cluster.urls, `/api/sessions/${sid}/extraction`, { fileUrl }, 15)))
    ).flat();
    expect(countBy(responses, (r) => String(r.status))).toEqual({ 200: 45 });
    const stats = await modelStats(cluster.model.url);
    expect(stats.bySession[sid]).toMatchObject({ calls: 3, maxConcurrent: 1 });
    // Three flights (one per file), each answered identically to its 15 callers.
    const byKey = new Map<string, Set<string>>();
    for (const r of responses) byKey.set(r.body.key, (byKey.get(r.body.key) ?? new Set()).add(JSON.stringify(r.body.result)));
    expect([...byKey.values()].map((answers) => answers.size)).toEqual([1, 1, 1]);
    expect(new Set(responses.map((r) => r.body.key)).size).toBe(3);
  });

  it('demeanor: concurrent frames of one session are serialised; a light stage of the same session is not', async () => {
    await resetModel(cluster.model);
    const sid = `${session}-d`;
    const frames = ['0001', '0002', '0003'].map((f) => `https://files.example/${sid}/frame-${f}.jpg`);
    const answers = ['one', 'two', 'three'].map((a) => `answer ${a} [latency:1200]`);
    const [heavy, light] = await Promise.all([
      Promise.all(frames.map((imageUrl) => burst(cluster.urls, `/api/sessions/${sid}/demeanor`, { imageUrl }, 10))),
      Promise.all(
        answers.map((answer, i) =>
          post(`${cluster.urls[i]}/api/sessions/${sid}-light/evaluation`, { questionNumber: 1, question: 'q', answer }),
        ),
      ),
    ]);
    expect(heavy.flat().every((r) => r.status === 200)).toBe(true);
    expect(light.every((r) => r.status === 200)).toBe(true);
    const stats = await modelStats(cluster.model.url);
    expect(stats.bySession[sid]).toMatchObject({ calls: 3, maxConcurrent: 1 });
    // Evaluation takes no session lock: its three different answers ran side by side.
    expect(stats.bySession[`${sid}-light`]).toMatchObject({ calls: 3, maxConcurrent: 3 });
  });

  it('demeanor results are never served from L1; extraction results are', async () => {
    await resetModel(cluster.model);
    const sid = `${session}-l1`;
    const node = cluster.urls[0]!;
    const demeanor = { imageUrl: `https://files.example/${sid}/frame.jpg` };
    const extraction = { fileUrl: `https://files.example/${sid}/resume.pdf` };
    /** The roles of `n` requests in a row (a node keeps an L1 copy of a flight once it listens for its forgets). */
    const roles = async (path: string, body: object, n: number) => {
      const out: { role: string | null; result: unknown }[] = [];
      for (let i = 0; i < n; i++) {
        const response = await post(`${node}${path}`, body);
        out.push({ role: response.role, result: response.body.result });
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return out;
    };
    const d = await roles(`/api/sessions/${sid}/demeanor`, demeanor, 5);
    const e = await roles(`/api/sessions/${sid}/extraction`, extraction, 5);
    expect(d.map((r) => r.role)).toEqual(['owner', 'replay', 'replay', 'replay', 'replay']);
    expect(e[0]!.role).toBe('owner');
    expect(e.at(-1)!.role).toBe('l1');
    expect(new Set(d.map((r) => JSON.stringify(r.result))).size).toBe(1);
    expect(new Set(e.map((r) => JSON.stringify(r.result))).size).toBe(1);
    expect((await modelStats(cluster.model.url)).calls).toBe(2);
  });
});

describe('failures are classified and shared', () => {
  it('a 400 from the model is a VALIDATION failure replayed to every caller, not retried', async () => {
    await resetModel(cluster.model);
    const body = { questionNumber: 9, question: 'q', answer: 'bad request please [fail:400]' };
    const responses = await burst(cluster.urls, `/api/sessions/${session}/evaluation`, body, 30);
    expect(responses.every((r) => r.status === 422)).toBe(true);
    expect(responses[0]!.body.error).toMatchObject({ type: 'VALIDATION', retryable: false });
    expect((await modelStats(cluster.model.url)).calls).toBe(1);
  });

  it('a 429 is OVERLOAD (503 + retry-after), a 5xx is PROVIDER (502, retried once inside the guard)', async () => {
    await resetModel(cluster.model);
    const overload = await post(`${cluster.urls[0]}/api/sessions/${session}/evaluation`, {
      questionNumber: 10,
      question: 'q',
      answer: 'x [fail:429]',
    });
    const provider = await post(`${cluster.urls[1]}/api/sessions/${session}/evaluation`, {
      questionNumber: 11,
      question: 'q',
      answer: 'x [fail:500]',
    });
    const recovered = await post(`${cluster.urls[2]}/api/sessions/${session}/evaluation`, {
      questionNumber: 12,
      question: 'q',
      answer: 'x [fail-once:500]',
    });
    expect(overload.status).toBe(503);
    expect(overload.body.error.type).toBe('OVERLOAD');
    expect(provider.status).toBe(502);
    expect(provider.body.error.type).toBe('PROVIDER');
    expect(recovered.status).toBe(200);
    const stats = await modelStats(cluster.model.url);
    // 429: not retried; 500: two attempts; fail-once: failed then succeeded.
    expect(stats.calls).toBe(1 + 2 + 2);
    // The library's metrics time each failed call under its error's code.
    const overloaded = { flight_stage: 'interview-evaluation', flight_outcome: 'failure', error_type: 'E_OPENAI_HTTP_429' };
    expect(await metric(cluster.urls[0]!, 'flight_execute_duration_count', overloaded)).toBe(1);
  });
});

describe('the @flight/express middleware on GET /api/sessions/:id/report', () => {
  it('120 concurrent identical GETs over 3 nodes run the handler once and share the response', async () => {
    await resetModel(cluster.model);
    const url = (i: number) => `${cluster.urls[i % 3]}/api/sessions/${session}-r/report?note=${encodeURIComponent('[latency:800]')}`;
    const responses = await Promise.all(
      Array.from({ length: 120 }, async (_, i) => {
        const res = await fetch(url(i));
        return { status: res.status, role: res.headers.get('x-flight-role'), body: await res.text() };
      }),
    );
    expect(responses.every((r) => r.status === 200)).toBe(true);
    expect(new Set(responses.map((r) => r.body)).size).toBe(1);
    expect((await modelStats(cluster.model.url)).calls).toBe(1);
    expect(responses.some((r) => r.role === 'follower')).toBe(true);
  });
});
