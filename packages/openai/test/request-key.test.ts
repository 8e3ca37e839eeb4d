/**
 * The request identity: two requests that differ in anything that can change the answer never share a
 * key; the order of fields and the request options never split one; the sampling policy.
 */
import { createSingleFlight, FlightConfigurationError } from '@flight/core';
import fc from 'fast-check';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { flightKeyOf, withFlights } from '../src/index.js';
import { canonicalBody, clientDigest, requestKey } from '../src/request-key.js';
import { samplesFreely } from '../src/sampling.js';

const client = clientDigest({ baseURL: 'https://api.openai.com/v1', apiKey: 'sk-a' });
const keyOf = (body: unknown, scope = '') => requestKey('openai', 'chat.completions', client, scope, canonicalBody(body)!);

/** A chat request with every answer-changing field this package knows, and one it does not. */
const request = fc.record(
  {
    model: fc.constantFrom('gpt-4o', 'gpt-4o-mini', 'o3'),
    messages: fc.array(fc.record({ role: fc.constantFrom('system', 'user', 'assistant'), content: fc.string({ maxLength: 20 }) }), {
      minLength: 1,
      maxLength: 3,
    }),
    temperature: fc.constantFrom(0, 0.2, 1),
    top_p: fc.constantFrom(0.5, 1),
    seed: fc.integer({ min: 0, max: 5 }),
    max_completion_tokens: fc.integer({ min: 1, max: 3 }),
    response_format: fc.constantFrom({ type: 'text' }, { type: 'json_object' }),
    tools: fc.array(fc.record({ type: fc.constant('function'), function: fc.record({ name: fc.constantFrom('a', 'b') }) }), {
      maxLength: 2,
    }),
    tool_choice: fc.constantFrom('auto', 'none', 'required'),
    stop: fc.array(fc.string({ maxLength: 3 }), { maxLength: 2 }),
    n: fc.integer({ min: 1, max: 2 }),
    logit_bias: fc.dictionary(fc.constantFrom('1', '2'), fc.integer({ min: -5, max: 5 })),
    stream: fc.boolean(),
    a_future_parameter: fc.constantFrom('x', 'y'),
  },
  { requiredKeys: ['model', 'messages'] },
);

describe('request identity', () => {
  it('two requests that differ in any field never share a key; the same request always does', () => {
    fc.assert(
      fc.property(request, request, (a, b) => {
        const same = canonicalBody(a) === canonicalBody(b);
        expect(keyOf(a) === keyOf(b)).toBe(same);
      }),
      { numRuns: 2000 },
    );
  });

  it('changing one field of a request changes its key, whichever field', () => {
    const base = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], temperature: 0, seed: 1 };
    const changes: Record<string, unknown> = {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi!' }],
      temperature: 0.1,
      seed: 2,
      top_p: 0.9,
      tools: [{ type: 'function', function: { name: 'f' } }],
      tool_choice: 'none',
      response_format: { type: 'json_object' },
      max_tokens: 5,
      stream: true,
      stream_options: { include_usage: true },
      reasoning_effort: 'high',
      a_future_parameter: 1,
    };
    const keys = new Set([keyOf(base), ...Object.entries(changes).map(([field, value]) => keyOf({ ...base, [field]: value }))]);
    expect(keys.size).toBe(Object.keys(changes).length + 1);
  });

  it('field order and undefined fields do not split a key; scope, client and API do', () => {
    const a = { model: 'm', messages: [{ role: 'user', content: 'x' }], temperature: 0 };
    const b = { temperature: 0, messages: [{ content: 'x', role: 'user' }], model: 'm', seed: undefined };
    expect(keyOf(a)).toBe(keyOf(b));
    expect(keyOf(a, 'tenant-1')).not.toBe(keyOf(a, 'tenant-2'));
    const other = clientDigest({ baseURL: 'https://api.openai.com/v1', apiKey: 'sk-b' });
    expect(requestKey('openai', 'chat.completions', other, '', canonicalBody(a)!)).not.toBe(keyOf(a));
    expect(clientDigest({ baseURL: 'https://other.example/v1', apiKey: 'sk-a' })).not.toBe(client);
    expect(requestKey('openai', 'responses', client, '', canonicalBody(a)!)).not.toBe(keyOf(a));
    expect(keyOf(a)).not.toContain('sk-a');
  });

  it('a body that is not plain JSON has no key (a file, a Date, a cycle, a bigint)', () => {
    const cycle: Record<string, unknown> = { model: 'm' };
    cycle.self = cycle;
    for (const body of [{ model: 'm', file: new Blob(['a']) }, { model: 'm', at: new Date(0) }, cycle, { model: 'm', n: 1n }, { n: NaN }])
      expect(canonicalBody(body)).toBeUndefined();
  });
});

describe('sampling policy', () => {
  it('a request samples freely unless it pins temperature 0 (and top_p 1) or a seed', () => {
    expect(samplesFreely({})).toBe(true); // the API's default temperature is 1
    expect(samplesFreely({ temperature: 0.7 })).toBe(true);
    expect(samplesFreely({ temperature: 0, top_p: 0.9 })).toBe(true);
    expect(samplesFreely({ temperature: 0 })).toBe(false);
    expect(samplesFreely({ temperature: 1, seed: 7 })).toBe(false);
  });
});

describe('the account a call is made on', () => {
  const flights = createSingleFlight({ mode: 'local' });
  const body = { model: 'm', messages: [{ role: 'user' as const, content: 'x' }], temperature: 0 };
  const baseURL = 'https://api.openai.com/v1';
  const keyThrough = (client: OpenAI, scope?: string) =>
    flightKeyOf(withFlights(client, { flights, ...(scope === undefined ? {} : { scope }) }).chat.completions, body)!.key;

  it('admin keys and account headers split keys like API keys do; the same account shares', () => {
    const admin = (adminAPIKey: string) => new OpenAI({ baseURL, adminAPIKey });
    expect(keyThrough(admin('ak-1'))).not.toBe(keyThrough(admin('ak-2')));
    expect(keyThrough(admin('ak-1'))).toBe(keyThrough(admin('ak-1')));
    const proxied = (key: string) => new OpenAI({ baseURL, apiKey: 'unused', defaultHeaders: { 'Api-Key': key, 'X-Trace': 'a' } });
    expect(keyThrough(proxied('p-1'))).not.toBe(keyThrough(proxied('p-2')));
    const traced = new OpenAI({ baseURL, apiKey: 'unused', defaultHeaders: { 'api-key': 'p-1', 'X-Trace': 'b' } });
    expect(keyThrough(traced)).toBe(keyThrough(proxied('p-1')));
    // The SDK also takes default headers as [name, value] pairs, or as `Headers`.
    const paired = new OpenAI({ baseURL, apiKey: 'unused', defaultHeaders: [['API-KEY', 'p-2']] });
    expect(keyThrough(paired)).toBe(keyThrough(proxied('p-2')));
    expect(keyThrough(paired)).not.toBe(keyThrough(proxied('p-1')));
    const fetched = new OpenAI({ baseURL, apiKey: 'unused', defaultHeaders: new Headers({ 'api-key': 'p-1' }) });
    expect(keyThrough(fetched)).toBe(keyThrough(proxied('p-1')));
  });

  it('per-call account headers, query, path and defaultBaseURL split keys; other request options do not', () => {
    const resource = withFlights(new OpenAI({ baseURL, apiKey: 'sk-a' }), { flights }).chat.completions;
    const keyWith = (request?: object) => flightKeyOf(resource, body, request)!.key;
    const plain = keyWith();
    expect(keyWith({ timeout: 5, maxRetries: 1, headers: { 'X-Trace': 'a' }, idempotencyKey: 'i' })).toBe(plain);
    const alice = keyWith({ headers: { Authorization: 'Bearer sk-alice' } });
    expect(alice).not.toBe(plain);
    expect(keyWith({ headers: { authorization: 'Bearer sk-alice', 'X-Trace': 'b' } })).toBe(alice);
    expect(keyWith({ headers: { Authorization: 'Bearer sk-bob' } })).not.toBe(alice);
    expect(keyWith({ headers: new Headers({ 'OpenAI-Project': 'p1' }) })).not.toBe(keyWith({ headers: [['openai-project', 'p2']] }));
    expect(keyWith({ headers: { 'OpenAI-Organization': 'o1' } })).not.toBe(keyWith({ headers: { 'OpenAI-Organization': 'o2' } }));
    expect(keyWith({ query: { 'api-version': '1' } })).not.toBe(keyWith({ query: { 'api-version': '2' } }));
    expect(keyWith({ path: '/a' })).not.toBe(keyWith({ path: '/b' }));
    expect(keyWith({ defaultBaseURL: 'https://a.example/v1' })).not.toBe(plain);
    // A target that is not plain JSON is not shared at all.
    expect(flightKeyOf(resource, body, { query: new URLSearchParams('a=1') })).toBeUndefined();
  });

  it('a client whose credentials come at call time needs scope to name its account', () => {
    const rotating = (token: string) => new OpenAI({ baseURL, apiKey: async () => token });
    expect(() => keyThrough(rotating('t-1'))).toThrow(FlightConfigurationError);
    expect(() => keyThrough(rotating('t-1'))).toThrow(/pass scope naming the account/);
    // The scope is the account: the same scope shares whatever token each client holds, others never do.
    expect(keyThrough(rotating('t-1'), 'account-a')).toBe(keyThrough(rotating('t-2'), 'account-a'));
    expect(keyThrough(rotating('t-1'), 'account-a')).not.toBe(keyThrough(rotating('t-1'), 'account-b'));
  });
});
