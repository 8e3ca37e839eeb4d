/**
 * The fake model's streaming answers over real HTTP, read as raw server-sent events: the OpenAI chunk
 * format, `[DONE]`, the configured token rate, and the same text as the non-streamed answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeModel, type FakeModel } from '@flight/fake-model';
import { readSse } from '../src/sse.js';

let model: FakeModel;
beforeAll(async () => {
  model = await startFakeModel({ port: 0, latencyMs: 5, tokensPerSecond: 50 });
});
afterAll(async () => {
  await model?.close();
});

const messages = (content: string) => [
  { role: 'system', content: 'You are an interview assistant. [stage:interview-evaluation] [session:fm] [format:text]' },
  { role: 'user', content },
];

async function complete(content: string, stream: boolean): Promise<Response> {
  return fetch(`${model.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'fake',
      messages: messages(content),
      stream,
      ...(stream ? { stream_options: { include_usage: true } } : {}),
    }),
  });
}

/**
 * The `data:` payloads of an SSE body, each with the time (ms since the request) it arrived; `into`
 * keeps what arrived when the read fails.
 */
async function events(res: Response, started: number, into: { data: string; at: number }[] = []): Promise<{ data: string; at: number }[]> {
  for await (const event of readSse(res.body!)) into.push({ data: event.data, at: performance.now() - started });
  return into;
}

describe('fake model: stream: true', () => {
  it('answers with chat.completion.chunk events, then [DONE], at the configured token rate; the text is the non-streamed answer', async () => {
    const whole = (await (await complete('An answer about fencing tokens.', false)).json()) as {
      choices: { message: { content: string } }[];
    };
    const started = performance.now();
    const res = await complete('An answer about fencing tokens.', true);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const received = await events(res, started);

    expect(received.at(-1)!.data).toBe('[DONE]');
    const chunks = received.slice(0, -1).map((e) => ({ ...e, json: JSON.parse(e.data) }));
    expect(chunks.every((c) => c.json.object === 'chat.completion.chunk')).toBe(true);
    expect(chunks[0]!.json.choices[0].delta).toEqual({ role: 'assistant', content: '' });
    const tokens = chunks.filter((c) => c.json.choices[0]?.delta?.content);
    expect(tokens.map((c) => c.json.choices[0].delta.content).join('')).toBe(whole.choices[0]!.message.content);
    expect(chunks.find((c) => c.json.choices[0]?.finish_reason)?.json.choices[0].finish_reason).toBe('stop');
    expect(chunks.at(-1)!.json.usage).toMatchObject({ completion_tokens: expect.any(Number) });

    // 50 tokens/s: one token every 20 ms, arriving over time rather than at once.
    expect(tokens.length).toBeGreaterThan(20);
    const span = tokens.at(-1)!.at - tokens[0]!.at;
    expect(span).toBeGreaterThanOrEqual((tokens.length - 1) * 20 * 0.8);
    expect(span).toBeLessThan((tokens.length - 1) * 20 * 5);
    expect(model.stats().streamed).toBe(1);
  });

  it('[tokens-per-sec:N] in the prompt sets the rate of that answer', async () => {
    const started = performance.now();
    const received = await events(await complete('Fast please [tokens-per-sec:500]', true), started);
    const tokens = received.filter((e) => e.data !== '[DONE]' && JSON.parse(e.data).choices[0]?.delta?.content);
    expect(tokens.length).toBeGreaterThan(20);
    expect(tokens.at(-1)!.at - tokens[0]!.at).toBeLessThan((tokens.length - 1) * 20 * 0.8);
  });

  it('[cut-after:N] drops the connection after N tokens, without [DONE]', async () => {
    const received: { data: string; at: number }[] = [];
    // The body either ends early or its read fails: in both cases no [DONE], exactly 3 tokens.
    await events(await complete('cut me [cut-after:3]', true), performance.now(), received).catch(() => {});
    expect(received.some((e) => e.data === '[DONE]')).toBe(false);
    expect(received.filter((e) => JSON.parse(e.data).choices[0]?.delta?.content).length).toBe(3);
  });
});
