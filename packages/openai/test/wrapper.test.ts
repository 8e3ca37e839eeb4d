/**
 * A wrapped OpenAI client against the fake model (real HTTP, the OpenAI wire format) with two nodes on
 * the shared Redis: what is coalesced, what each caller gets and sees, errors by SDK class, aborts.
 */
import { randomUUID } from 'node:crypto';
import {
  FlightConfigurationError,
  FlightStreamExpiredError,
  FlightValidationError,
  createSingleFlight,
  type SingleFlight,
  type StreamPosition,
} from '@flight/core';
import { startFakeModel, type FakeModel } from '@flight/fake-model';
import { createIoredisCoordinator, createIoredisSessionLock } from '@flight/redis-ioredis';
import { deleteKeys, sharedRedisUrl } from '@flight/test-servers';
import OpenAI, { APIConnectionError, BadRequestError, InternalServerError, RateLimitError } from 'openai';
import { Stream } from 'openai/streaming';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  FlightOpenAINoResponseError,
  FlightOpenAIStreamCutError,
  flightKeyOf,
  flightOf,
  flightRequest,
  positionOf,
  withFlights,
} from '../src/index.js';

const prefix = `flight-openai-${randomUUID().slice(0, 8)}`;
let model: FakeModel;
const flights: SingleFlight[] = [];

/** A node on the shared Redis; `locked`: its stages hold the session lock while a call runs. */
function node(nodeId: string, locked = false): SingleFlight {
  const flight = createSingleFlight({
    coordinator: createIoredisCoordinator({ redis: sharedRedisUrl(), prefix }),
    nodeId,
    defaults: { l1: { enabled: false }, guard: { retry: false }, ...(locked ? { sessionLock: { enabled: true } } : {}) },
    ...(locked ? { sessionLock: createIoredisSessionLock({ redis: sharedRedisUrl(), prefix }) } : {}),
  });
  flights.push(flight);
  return flight;
}

const sdk = () => new OpenAI({ baseURL: `${model.url}/v1`, apiKey: 'sk-test', maxRetries: 0 });
let a: OpenAI;
let b: OpenAI;
const ask = (text: string, extra: Record<string, unknown> = {}) => ({
  model: 'fake-model',
  messages: [{ role: 'user' as const, content: `${text} [latency:150] ${randomUUID()}` }],
  temperature: 0,
  ...extra,
});

beforeAll(async () => {
  model = await startFakeModel({ port: 0, latencyMs: 5, tokensPerSecond: 200 });
  a = withFlights(sdk(), { flights: node('a') });
  b = withFlights(sdk(), { flights: node('b') });
});
afterAll(async () => {
  await Promise.all(flights.map((f) => f.close()));
  await model?.close();
  await deleteKeys(sharedRedisUrl(), `${prefix}*`);
});
beforeEach(async () => {
  await fetch(`${model.url}/reset`, { method: 'POST' });
});

describe('withFlights: one model call for identical requests', () => {
  it('chat.completions: 2 nodes × 50 identical calls → 1 upstream call; every caller gets the completion and its own role', async () => {
    const body = ask('hello');
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 ? a : b).chat.completions.create(body)));
    expect(model.stats().calls).toBe(1);
    const content = results[0]!.choices[0]!.message.content;
    expect(content).toEqual(expect.any(String));
    for (const r of results)
      expect(r).toMatchObject({
        object: 'chat.completion',
        choices: [{ message: { content } }],
        usage: { total_tokens: expect.any(Number) },
      });
    const roles = results.map((r) => flightOf(r)!.role);
    expect(roles.filter((r) => r === 'owner')).toHaveLength(1);
    expect(roles.filter((r) => r === 'follower')).toHaveLength(99);
    // `shared`: another caller's run answered this call — never the owner's, whoever joined it.
    expect(results.map((r) => flightOf(r)!.shared).filter((shared) => !shared)).toHaveLength(1);
    expect(results.find((r) => flightOf(r)!.role === 'owner')!).toSatisfy((r: object) => flightOf(r)!.shared === false);
    expect(new Set(results).size).toBe(100); // each caller its own object
    // A later identical call replays the stored answer.
    const later = await a.chat.completions.create(body);
    expect(flightOf(later)).toMatchObject({ role: 'replay', shared: true });
    // The key a call makes is known before it is made (to forget a kept answer, say): the same on each node.
    expect(flightKeyOf(a.chat.completions, body)).toEqual({ stage: 'openai', key: flightOf(later)!.key });
    expect(flightKeyOf(b.chat.completions, body)).toEqual(flightKeyOf(a.chat.completions, body));
    expect(flightKeyOf(a.chat.completions, { ...body, temperature: 1 })).toBeUndefined();
    expect(flightKeyOf(sdk().chat.completions, body)).toBeUndefined();
    expect(model.stats().calls).toBe(1);
  });

  it('stream: true → every caller gets the SDK Stream with the same chunks; one upstream call', async () => {
    const body = {
      model: 'fake-model',
      messages: [{ role: 'user' as const, content: `[format:text] [latency:100] ${randomUUID()}` }],
      temperature: 0,
      stream: true as const,
    };
    const streams = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).chat.completions.create(body)));
    const texts = await Promise.all(
      streams.map(async (stream) => {
        expect(stream).toBeInstanceOf(Stream);
        let text = '';
        for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
        return text;
      }),
    );
    expect(model.stats()).toMatchObject({ calls: 1, streamed: 1 });
    expect(texts[0]!.length).toBeGreaterThan(20);
    expect(new Set(texts).size).toBe(1);
    expect(streams.map((s) => flightOf(s)!.role).filter((r) => r === 'owner')).toHaveLength(1);
  });

  it('responses.create (JSON and streamed) and embeddings.create are coalesced too', async () => {
    const input = `summarise [latency:100] ${randomUUID()}`;
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).responses.create({ model: 'fake-model', input, temperature: 0 })),
    );
    expect(model.stats().byApi.responses).toBe(1);
    for (const r of responses) expect(r.output_text).toBe(responses[0]!.output_text);
    const streamedInput = `again [latency:100] ${randomUUID()}`;
    const events = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        const stream = await (i % 2 ? a : b).responses.create({ model: 'fake-model', input: streamedInput, temperature: 0, stream: true });
        const types: string[] = [];
        for await (const event of stream) types.push(event.type);
        return types;
      }),
    );
    expect(model.stats().byApi.responses).toBe(2);
    for (const types of events) expect(types).toEqual(events[0]);
    expect(events[0]!.at(-1)).toBe('response.completed');
    const embedInput = [`a ${randomUUID()}`, 'b'];
    const embeddings = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).embeddings.create({ model: 'fake-embedding', input: embedInput })),
    );
    expect(model.stats().byApi.embeddings).toBe(1);
    // The SDK's own decoding of the default base64 encoding ran once, in the owner's call: numbers for all.
    for (const e of embeddings) expect(e.data.map((d) => d.embedding)).toEqual(embeddings[0]!.data.map((d) => d.embedding));
    expect(embeddings[0]!.data[0]!.embedding).toHaveLength(8);
    expect(typeof embeddings[0]!.data[0]!.embedding[0]).toBe('number');
  });

  it('a request that samples without a seed gets its own answer unless the wrapper says share: always', async () => {
    const sampled = { model: 'fake-model', messages: [{ role: 'user' as const, content: `poem [latency:50] ${randomUUID()}` }] };
    await Promise.all(Array.from({ length: 5 }, () => a.chat.completions.create(sampled)));
    expect(model.stats().calls).toBe(5);
    const seeded = {
      ...sampled,
      temperature: 0.8,
      seed: 42,
      messages: [{ role: 'user' as const, content: `seeded [latency:50] ${randomUUID()}` }],
    };
    await Promise.all(Array.from({ length: 5 }, () => a.chat.completions.create(seeded)));
    expect(model.stats().calls).toBe(6);
    const always = withFlights(sdk(), { flights: flights[0]!, share: 'always' });
    const free = { ...sampled, messages: [{ role: 'user' as const, content: `free [latency:50] ${randomUUID()}` }] };
    await Promise.all(Array.from({ length: 5 }, () => always.chat.completions.create(free)));
    expect(model.stats().calls).toBe(7);
  });

  it('scopes never share: two tenants asking the same thing make two calls', async () => {
    const body = ask('tenant');
    const t1 = withFlights(sdk(), { flights: flights[0]!, scope: 'tenant-1' });
    const t2 = withFlights(sdk(), { flights: flights[1]!, scope: 'tenant-2' });
    await Promise.all([t1, t2, t1, t2].map((client) => client.chat.completions.create(body)));
    expect(model.stats().calls).toBe(2);
  });
});

describe('withFlights: per-call accounts', () => {
  it('calls made with different per-call keys (a bring-your-own-key gateway) never share; the same key does', async () => {
    const body = ask('byok');
    const as = (key: string) => ({ headers: { Authorization: `Bearer ${key}` } });
    const results = await Promise.all([
      a.chat.completions.create(body, as('sk-alice')),
      b.chat.completions.create(body, as('sk-bob')),
      a.chat.completions.create(body, as('sk-alice')),
      b.chat.completions.create(body, as('sk-bob')),
    ]);
    expect(model.stats().calls).toBe(2);
    expect(results.map((r) => flightOf(r)!.key)).toEqual([
      flightOf(results[0]!)!.key,
      flightOf(results[1]!)!.key,
      flightOf(results[0]!)!.key,
      flightOf(results[1]!)!.key,
    ]);
    expect(flightOf(results[0]!)!.key).not.toBe(flightOf(results[1]!)!.key);
  });
});

describe('withFlights: errors and aborts', () => {
  it('a 400 reaches every caller as BadRequestError with its body, and is replayed to later callers without a call', async () => {
    const body = ask('bad [fail:400]');
    const errors = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).chat.completions.create(body).catch((e: unknown) => e)),
    );
    expect(model.stats().calls).toBe(1);
    for (const error of errors) {
      expect(error).toBeInstanceOf(BadRequestError);
      expect(error).toMatchObject({ status: 400, error: { message: 'invalid request (injected)', type: 'invalid_request_error' } });
    }
    await expect(b.chat.completions.create(body)).rejects.toBeInstanceOf(BadRequestError);
    expect(model.stats().calls).toBe(1);
  });

  it('a 429 or 5xx reaches callers by class and is never replayed: a caller on another node runs again, later calls get the answer', async () => {
    for (const [fault, type] of [
      ['429', RateLimitError],
      ['500', InternalServerError],
    ] as const) {
      await fetch(`${model.url}/reset`, { method: 'POST' });
      const body = ask(`retry [fail-once:${fault}]`);
      const outcomes = await Promise.all(
        Array.from({ length: 6 }, (_, i) => (i % 2 ? a : b).chat.completions.create(body).catch((e: unknown) => e)),
      );
      const failed = outcomes.filter((o) => o instanceof Error);
      // The failed run's own caller gets the SDK's class; callers elsewhere may take the flight over.
      expect(failed.length).toBeGreaterThan(0);
      for (const error of failed) expect(error, String(error)).toBeInstanceOf(type);
      expect(model.stats().calls).toBeLessThanOrEqual(2);
      const next = await b.chat.completions.create(body);
      expect(next.choices[0]!.message.content).toEqual(expect.any(String));
      expect(model.stats().calls).toBe(2);
    }
  });

  it("a caller aborting leaves the shared call running for the others, the owner's caller included", async () => {
    const body = ask('abort [latency:300]');
    const owner = new AbortController();
    const follower = new AbortController();
    const calls = [
      a.chat.completions.create(body, { signal: owner.signal }),
      b.chat.completions.create(body, { signal: follower.signal }),
      a.chat.completions.create(body),
      b.chat.completions.create(body),
    ];
    await new Promise((resolve) => setTimeout(resolve, 80));
    owner.abort();
    follower.abort();
    const settled = await Promise.allSettled(calls);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected', 'fulfilled', 'fulfilled']);
    expect(model.stats().calls).toBe(1);
  });

  it('cancelAbandoned: a call every caller left is cancelled (the model stops); by default it finishes and is kept', async () => {
    // A streamed answer whose only reader drops it after 2 events: the model's stream is closed at once.
    const cancelling = withFlights(sdk(), { flights: flights[0]!, cancelAbandoned: true });
    const body = {
      model: 'fake-model',
      messages: [{ role: 'user' as const, content: `[format:text] [tokens-per-sec:20] ${randomUUID()}` }],
      temperature: 0,
      stream: true as const,
    };
    let events = 0;
    for await (const _ of await cancelling.chat.completions.create(body)) if (++events === 2) break;
    await expect.poll(() => model.stats().inFlight, { timeout: 2000, interval: 20 }).toBe(0);
    // Nothing was kept: the next caller asks the model again.
    const again = await b.chat.completions.create(body);
    for await (const _ of again) void _;
    expect(flightOf(again)!.role).toBe('owner');
    expect(model.stats().calls).toBe(2);
    // An answer whose caller aborts: cancelled by default, kept for later callers when asked.
    for (const cancelAbandoned of [true, false]) {
      await fetch(`${model.url}/reset`, { method: 'POST' });
      const client = withFlights(sdk(), { flights: flights[0]!, cancelAbandoned });
      const question = ask('left alone [latency:300]');
      const caller = new AbortController();
      const left = client.chat.completions.create(question, { signal: caller.signal });
      await expect.poll(() => model.stats().inFlight, { timeout: 2000, interval: 10 }).toBe(1);
      caller.abort();
      await expect(left).rejects.toThrow();
      await new Promise((resolve) => setTimeout(resolve, 400));
      const later = await client.chat.completions.create(question);
      expect(flightOf(later)!.role).toBe(cancelAbandoned ? 'owner' : 'replay');
      expect(model.stats().calls).toBe(cancelAbandoned ? 2 : 1);
    }
  });

  it('withResponse() and asResponse() on a coalesced call reject with a typed error; other methods pass through', async () => {
    const call = a.chat.completions.create(ask('raw'));
    await expect(call.withResponse()).rejects.toBeInstanceOf(FlightOpenAINoResponseError);
    await call; // the call itself goes on and answers
    const models = await a.models.list();
    expect(models.data[0]!.id).toBe('fake-model');
    expect(a).toBeInstanceOf(OpenAI);
    expect(a.chat).toBe(a.chat);
  });

  it('configuration mistakes fail where the client is wrapped', () => {
    expect(() => withFlights(sdk(), { flights: {} as SingleFlight })).toThrow(FlightConfigurationError);
    expect(() => withFlights(sdk(), { flights: flights[0]!, share: 'sometimes' as never })).toThrow(/share must be one of/);
    expect(() => withFlights(sdk(), { flights: flights[0]!, cancelAbandoned: 'yes' as never })).toThrow(
      /cancelAbandoned must be true or false/,
    );
    expect(() => withFlights(sdk(), { flights: flights[0]!, stgae: 'x' } as never)).toThrow(/did you mean "stage"/);
    expect(() => withFlights({} as OpenAI, { flights: flights[0]! })).toThrow(/client has no chat.completions.create/);
  });
});

describe('flightRequest: sessions and resumed streams', () => {
  const streamedAsk = (text: string) => ({
    model: 'fake-model',
    messages: [{ role: 'user' as const, content: `[format:text] [latency:50] [tokens-per-sec:100] ${text} ${randomUUID()}` }],
    temperature: 0,
    stream: true as const,
  });

  it('a stream cut off resumes after its last event on another node: the exact rest, one model call, during and after the run', async () => {
    const body = streamedAsk('resume me');
    const whole = await a.chat.completions.create(body);
    const cutOff = await a.chat.completions.create(body);
    const head: any[] = [];
    for await (const event of cutOff) {
      head.push(event);
      if (head.length === 4) break;
    }
    const at = positionOf(cutOff)!;
    expect(at).toEqual({ epoch: expect.any(Number), index: 4 });
    // During the run, on the other node.
    const during: any[] = [];
    for await (const event of await b.chat.completions.create(body, flightRequest({ after: at }))) during.push(event);
    const all: any[] = [];
    for await (const event of whole) all.push(event);
    expect(all.length).toBeGreaterThan(10);
    expect([...head, ...during]).toEqual(all);
    // After the run, from the stored events.
    const after: any[] = [];
    const resumed = await a.chat.completions.create(body, flightRequest({ after: at }, { timeout: 5000 }));
    for await (const event of resumed) after.push(event);
    expect(after).toEqual(all.slice(4));
    expect(positionOf(resumed)).toEqual({ epoch: at.epoch, index: all.length });
    expect(flightOf(resumed)).toMatchObject({ role: 'replay' });
    expect(model.stats().calls).toBe(1);
  });

  it('a resume of a run that never was fails with FlightStreamExpiredError and calls nothing; after on an unstreamed call is refused', async () => {
    const position: StreamPosition = { epoch: 1, index: 3 };
    await expect(b.chat.completions.create(streamedAsk('never ran'), flightRequest({ after: position }))).rejects.toBeInstanceOf(
      FlightStreamExpiredError,
    );
    await expect(b.chat.completions.create(ask('json'), flightRequest({ after: position }))).rejects.toBeInstanceOf(FlightValidationError);
    const sampled = { ...streamedAsk('sampled'), temperature: 1 };
    await expect(b.chat.completions.create(sampled, flightRequest({ after: position }))).rejects.toThrow(/not coalesced/);
    expect(() => flightRequest({ sesionId: 'x' } as never)).toThrow(/did you mean "sessionId"/);
    expect(model.stats().calls).toBe(0);
  });

  it.each([
    ['ends cleanly before its finish', '[end-after:3]', 'FlightOpenAIStreamCutError'],
    ['loses its connection', '[cut-after:3]', 'APIConnectionError'],
  ])('a stream that %s is a failure for every caller, never a short answer, and is not kept', async (_, marker, failure) => {
    const body = streamedAsk(marker);
    const read = async (client: OpenAI) => {
      let events = 0;
      for await (const _ of await client.chat.completions.create(body)) events++;
      return events;
    };
    const settled = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => read(i % 2 ? a : b)));
    // A provider failure is not replayed: a caller on another node may run again, and the callers who read
    // the cut run's events then learn it was replaced. None is given the cut answer as a whole one.
    const reasons = settled.map((s) => (s.status === 'rejected' ? (s.reason as Error).constructor.name : 'fulfilled'));
    for (const reason of reasons) expect([failure, 'FlightStreamInterruptedError']).toContain(reason);
    expect(reasons).toContain(failure);
    // Not stored as the answer: the next caller asks the model again.
    const before = model.stats().calls;
    await expect(read(a)).rejects.toThrow(failure === 'APIConnectionError' ? APIConnectionError : FlightOpenAIStreamCutError);
    expect(model.stats().calls).toBe(before + 1);
  });

  it('sessionId: calls of one session on a locked stage run one at a time across nodes, other sessions alongside', async () => {
    const x = withFlights(sdk(), { flights: node('x', true), stage: 'locked' });
    const y = withFlights(sdk(), { flights: node('y', true), stage: 'locked' });
    const inSession = (session: string, i: number) =>
      ask(`[session:${session}] [latency:120] question ${i}`, {
        messages: [{ role: 'user', content: `[session:${session}] [latency:120] q${i} ${randomUUID()}` }],
      });
    const calls = [0, 1, 2, 3].flatMap((i) => [
      (i % 2 ? x : y).chat.completions.create(inSession('s1', i), flightRequest({ sessionId: 's1' })),
      (i % 2 ? x : y).chat.completions.create(inSession('s2', i)),
    ]);
    await Promise.all(calls);
    const { bySession } = model.stats();
    expect(bySession.s1).toMatchObject({ calls: 4, maxConcurrent: 1 });
    expect(bySession.s2!.maxConcurrent).toBeGreaterThan(1);
  });
});

describe('withFlights: the owner is answered before the answer is stored', () => {
  it('a call that asked the model resolves while its store is still held; another node then gets the stored answer', async () => {
    const coordinator = createIoredisCoordinator({ redis: sharedRedisUrl(), prefix });
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const complete = coordinator.complete.bind(coordinator);
    coordinator.complete = async (...args: Parameters<typeof complete>) => {
      await gate;
      return complete(...args);
    };
    const held = createSingleFlight({ coordinator, nodeId: 'held', defaults: { l1: { enabled: false }, guard: { retry: false } } });
    flights.push(held);
    const client = withFlights(sdk(), { flights: held });
    const body = ask('stored after');
    try {
      const answered = await Promise.race([
        client.chat.completions.create(body),
        new Promise<undefined>((resolve) => setTimeout(resolve, 2_000, undefined)),
      ]);
      expect(answered && flightOf(answered)?.role).toBe('owner');
      const other = b.chat.completions.create(body);
      open();
      const followed = await other;
      expect(followed.choices[0]!.message.content).toBe(answered!.choices[0]!.message.content);
    } finally {
      open();
    }
    expect(model.stats().calls).toBe(1);
  });
});
