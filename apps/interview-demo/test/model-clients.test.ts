/**
 * The demo's model clients (the `openai` SDK wrapped per stage by `@flight/openai`) against the fake
 * OpenAI-compatible model over real HTTP, on one node with the in-memory coordinator: the calls each
 * client really sends, and how each model failure is answered over HTTP (failures.ts).
 */
import { createMemoryCoordinator, createMemorySessionLock, createSingleFlight, type SingleFlight } from '@flight/core';
import { startFakeModel, type FakeModel } from '@flight/fake-model';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBody, statusOf } from '../src/failures.js';
import { createModelClients, type ModelClients } from '../src/model-clients.js';
import { STAGES, stagePolicies } from '../src/stages.js';

let model: FakeModel;
let flights: SingleFlight;
let models: ModelClients;
const sent: string[] = [];

beforeAll(async () => {
  model = await startFakeModel({ port: 0, latencyMs: 5, tokensPerSecond: 200 });
  flights = createSingleFlight({
    coordinator: createMemoryCoordinator(),
    sessionLock: createMemorySessionLock(),
    nodeId: 'model-clients',
    stages: stagePolicies({ modelTimeoutMs: 2000 }),
  });
  models = createModelClients({ baseUrl: `${model.url}/v1`, model: 'fake-model', timeoutMs: 400 }, flights, (stage, outcome) =>
    sent.push(`${stage} ${outcome}`),
  );
});
afterAll(async () => {
  await flights?.close();
  await model?.close();
});

const ask = (content: string) => ({ model: 'fake-model', temperature: 0, messages: [{ role: 'user' as const, content }] });
const failureOf = async (content: string) => {
  const error = await models
    .forStage(STAGES.followup)
    .chat.completions.create(ask(`${content} ${Math.random()}`))
    .catch((e: unknown) => e);
  return { status: statusOf(error), ...errorBody(error).error };
};

describe('model clients', () => {
  it("a stage's client makes identical calls once and reports each call it sends", async () => {
    sent.length = 0;
    const client = models.forStage(STAGES.evaluation);
    expect(models.forStage(STAGES.evaluation)).toBe(client);
    const body = ask(`score this answer ${Math.random()}`);
    const answers = await Promise.all(Array.from({ length: 8 }, () => client.chat.completions.create(body)));
    expect(new Set(answers.map((a) => a.choices[0]!.message.content)).size).toBe(1);
    expect(sent).toEqual(['interview-evaluation ok']);
    await models.plain('interview-report').chat.completions.create(ask('not coalesced'));
    expect(sent).toEqual(['interview-evaluation ok', 'interview-report ok']);
  });

  it.each([
    ['[fail:429]', 503, 'OVERLOAD', 'E_MODEL_HTTP_429', true],
    ['[fail:500]', 502, 'PROVIDER', 'E_MODEL_HTTP_500', true],
    ['[fail:400]', 422, 'VALIDATION', 'E_MODEL_HTTP_400', false],
    ['[fail:timeout]', 504, 'TIMEOUT', 'E_MODEL_TIMEOUT', true],
  ])('%s → HTTP %i, %s (%s)', async (marker, status, type, code, retryable) => {
    expect(await failureOf(`please ${marker}`)).toMatchObject({ status, type, code, retryable });
  });

  it('an unreachable model → 502 PROVIDER', async () => {
    // The follow-up stage's breaker is open after the failures above: another stage.
    const unreachable = createModelClients({ baseUrl: 'http://127.0.0.1:1/v1', model: 'fake-model' }, flights, () => {});
    const error = await unreachable
      .forStage(STAGES.extraction)
      .chat.completions.create(ask(`hello ${Math.random()}`))
      .catch((e: unknown) => e);
    expect({ status: statusOf(error), ...errorBody(error).error }).toMatchObject({
      status: 502,
      type: 'PROVIDER',
      code: 'E_MODEL_CONNECTION',
    });
  });

  it('a stream cut halfway → the events that came, then 502 PROVIDER', async () => {
    const stream = await models
      .forStage(STAGES.demeanor)
      .chat.completions.create({ ...ask(`[cut-after:2] ${Math.random()}`), stream: true });
    let events = 0;
    const error = await (async () => {
      for await (const _ of stream) events++;
    })().catch((e: unknown) => e);
    expect(events).toBe(3); // the role, then the 2 tokens before the cut
    expect({ status: statusOf(error), ...errorBody(error).error }).toMatchObject({
      status: 502,
      type: 'PROVIDER',
      code: 'E_MODEL_CONNECTION',
    });
  });
});
