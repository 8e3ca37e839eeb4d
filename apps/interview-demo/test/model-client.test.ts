/**
 * The model client (the `openai` SDK) against the fake OpenAI-compatible model over real HTTP: answers,
 * and each failure typed the way the single-flight classifier reads it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeModel, type FakeModel } from '../src/fake-model.js';
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
