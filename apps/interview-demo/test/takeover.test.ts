/**
 * The owner node is SIGKILLed during a slow model call: another node takes the flight over
 * (after takeover detection: 3 missed heartbeats of 500 ms) and every caller on the surviving
 * nodes gets the same answer.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { burst, countBy, modelStats, post } from '../src/load.js';
import { readSse } from '../src/sse.js';
import { metric, startCluster, until, type TestCluster } from './helpers.js';

let cluster: TestCluster;

beforeAll(async () => {
  cluster = await startCluster({ name: 'takeover', redisUrl: process.env.REDIS_URL!, latencyMs: 200, heartbeatMs: 500 });
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
});

it('owner SIGKILLed mid-call → another node takes over; every request on the surviving nodes is answered', async () => {
  const [owner, ...survivors] = cluster.nodes;
  const sid = `kill-${Date.now().toString(36)}`;
  const path = `/api/sessions/${sid}/evaluation`;
  // The model takes 2.5 s for this prompt, long enough to kill the owner in the middle of it.
  const body = { questionNumber: 1, question: 'Tell me about a failure.', answer: 'The node died mid-call. [latency:2500]' };

  const ownerCall = post(`${owner!.url}${path}`, body);
  await until('the owner to call the model', async () => (await modelStats(cluster.model.url)).inFlight === 1);
  const followers = burst(
    survivors.map((n) => n.url),
    path,
    body,
    40,
  );
  // Let the followers join the flight (they see a fresh heartbeat and wait).
  await until('followers to wait on the owner', async () => {
    const waiting = await Promise.all(
      survivors.map(async (n) => ((await (await fetch(`${n.url}/api/state`)).json()) as { flights: unknown[] }).flights.length),
    );
    return waiting.every((w: number) => w > 0);
  });
  await owner!.kill('SIGKILL');

  const responses = await followers;
  expect((await ownerCall).status).toBe(0); // its connection died with it

  expect(countBy(responses, (r) => String(r.status))).toEqual({ 200: 40 });
  expect(new Set(responses.map((r) => JSON.stringify(r.body.result))).size).toBe(1);
  // The killed owner's call and the new owner's: two model calls, not one per caller — the second one
  // made by one of the survivors.
  expect((await modelStats(cluster.model.url)).calls).toBe(2);
  const survivorCalls = await Promise.all(survivors.map((n) => metric(n.url, 'demo_model_calls_total')));
  expect(survivorCalls.reduce((a, b) => a + b)).toBe(1);
  const takeovers = await Promise.all(survivors.map((n) => metric(n.url, 'flight_takeovers_total')));
  expect(takeovers.reduce((a, b) => a + b)).toBe(1);
}, 40_000);

it("a stream resumed after its owner was SIGKILLed: the old run's rest, then `restart` and the new run whole; done counts the new run", async () => {
  const [, owner, survivor] = cluster.nodes;
  const sid = `kill-stream-${Date.now().toString(36)}`;
  const path = `/api/sessions/${sid}/follow-up/stream`;
  const body = { currentQuestion: 'q', answer: 'The stream outlives its owner. [tokens-per-sec:10]' };
  const send = (url: string, lastEventId?: string, signal?: AbortSignal) =>
    fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
      body: JSON.stringify(body),
      signal,
    });
  // A client reads 3 chunks from the owner, then its connection drops.
  const leaving = new AbortController();
  let lastId: string | undefined;
  let read = 0;
  await expect(
    (async () => {
      for await (const event of readSse((await send(owner!.url, undefined, leaving.signal)).body!)) {
        if (event.event !== 'chunk') continue;
        lastId = event.id;
        if (++read === 3) leaving.abort();
      }
    })(),
  ).rejects.toThrow();
  // More of the old run is stored before its owner dies.
  await new Promise((resolve) => setTimeout(resolve, 500));
  await owner!.kill('SIGKILL');
  const events: { event: string; text?: string; chunks?: number }[] = [];
  for await (const event of readSse((await send(survivor!.url, lastId)).body!))
    events.push({ event: event.event, ...(JSON.parse(event.data) as { text?: string; chunks?: number }) });
  const restart = events.findIndex((e) => e.event === 'restart');
  expect(restart).toBeGreaterThan(0); // chunks of the old run came first
  const newRun = events.slice(restart + 1).filter((e) => e.event === 'chunk');
  const done = events.at(-1)!;
  expect(done.event).toBe('done');
  expect(newRun.length).toBeGreaterThan(3);
  expect(done).toMatchObject({ chunks: newRun.length, text: newRun.map((e) => e.text).join('') });
}, 40_000);
