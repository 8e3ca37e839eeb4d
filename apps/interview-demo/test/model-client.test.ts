/**
 * The model client (the `openai` SDK) against the fake OpenAI-compatible model over real HTTP: answers,
 * and each failure typed the way the single-flight classifier reads it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeModel, type FakeModel } from '@flight/fake-model';
import { createModelClient, ModelCallError } from '../src/model-client.js';

let model: FakeModel;
beforeAll(async () => {
  model = await startFakeModel({ port: 0, latencyMs: 5 });
});
afterAll(async () => {
  await model?.close();
});

const ask = (content: string, options: { timeoutMs?: number; signal?: AbortSignal; baseUrl?: string } = {}) =>
  createModelClient({ baseUrl: options.baseUrl ?? `${model.url}/v1`, model: 'fake', timeoutMs: options.timeoutMs ?? 5000 }).chat(
    [{ role: 'user', content }],
    { signal: options.signal },
  );

describe('model client (openai SDK)', () => {
  it('returns the completion text and model', async () => {
    const answer = await ask('score this answer');
    expect(answer.content.length).toBeGreaterThan(0);
    expect(typeof answer.model).toBe('string');
  });

  it.each([
    ['[fail:429]', 429, 'OVERLOAD', 'E_MODEL_OVERLOADED'],
    ['[fail:500]', 500, 'PROVIDER', 'E_MODEL_HTTP_500'],
    ['[fail:400]', 400, 'VALIDATION', 'E_MODEL_HTTP_400'],
  ])('%s → a typed ModelCallError (status %i, %s)', async (marker, status, failureType, code) => {
    const error = await ask(`please ${marker}`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelCallError);
    expect(error).toMatchObject({ status, failureType, code });
  });

  it('no answer in time → TIMEOUT', async () => {
    const error = await ask('[fail:timeout]', { timeoutMs: 300 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ failureType: 'TIMEOUT', code: 'E_MODEL_TIMEOUT' });
  });

  it("the caller's abort comes back as the signal's own reason", async () => {
    const controller = new AbortController();
    const reason = new Error('lease lost');
    setTimeout(() => controller.abort(reason), 100);
    await expect(ask('[fail:timeout]', { signal: controller.signal })).rejects.toBe(reason);
  });

  it('an unreachable model → PROVIDER, E_MODEL_UNREACHABLE', async () => {
    const error = await ask('hello', { baseUrl: 'http://127.0.0.1:1/v1' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ failureType: 'PROVIDER', code: 'E_MODEL_UNREACHABLE' });
  });
});

describe('model client: chatStream (openai SDK streaming)', () => {
  const client = (timeoutMs = 5000) => createModelClient({ baseUrl: `${model.url}/v1`, model: 'fake', timeoutMs });
  const prompt = (content: string) => [
    { role: 'system' as const, content: 'You are an interview assistant. [stage:interview-followup] [format:text]' },
    { role: 'user' as const, content },
  ];

  it('yields the text in several deltas, as they arrive; joined they are the whole answer', async () => {
    const whole = await client().chat(prompt('stream me [tokens-per-sec:100]'));
    const deltas: { text: string; at: number }[] = [];
    const started = performance.now();
    for await (const text of client().chatStream(prompt('stream me [tokens-per-sec:100]')))
      deltas.push({ text, at: performance.now() - started });
    expect(deltas.length).toBeGreaterThan(10);
    expect(deltas.map((d) => d.text).join('')).toBe(whole.content);
    // 100 tokens/s: the first delta arrives well before the last one.
    expect(deltas.at(-1)!.at - deltas[0]!.at).toBeGreaterThanOrEqual((deltas.length - 1) * 10 * 0.8);
  });

  it('an HTTP failure before the stream → the same typed ModelCallError as chat()', async () => {
    const error = await (async () => {
      for await (const _ of client().chatStream(prompt('[fail:429]'))) void _;
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelCallError);
    expect(error).toMatchObject({ status: 429, failureType: 'OVERLOAD' });
  });

  it('a stream cut halfway → PROVIDER after the deltas that did arrive', async () => {
    const deltas: string[] = [];
    const error = await (async () => {
      for await (const text of client().chatStream(prompt('[cut-after:4]'))) deltas.push(text);
    })().catch((e: unknown) => e);
    expect(deltas).toHaveLength(4);
    expect(error).toBeInstanceOf(ModelCallError);
    expect(error).toMatchObject({ failureType: 'PROVIDER' });
  });

  it("the caller's abort mid-stream comes back as the signal's own reason", async () => {
    const controller = new AbortController();
    const reason = new Error('lease lost');
    const deltas: string[] = [];
    const error = await (async () => {
      for await (const text of client().chatStream(prompt('slowly [tokens-per-sec:20]'), { signal: controller.signal })) {
        deltas.push(text);
        if (deltas.length === 2) controller.abort(reason);
      }
    })().catch((e: unknown) => e);
    expect(error).toBe(reason);
    expect(deltas.length).toBeLessThan(5);
  });
});
