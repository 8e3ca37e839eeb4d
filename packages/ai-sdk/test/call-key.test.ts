/**
 * The flight key of a call: every call option, the model, its account and the scope are in it — any one
 * field apart never shares — and nothing else (the abort signal, the order of an object's keys).
 */
import type { LanguageModelV4CallOptions } from '@ai-sdk/provider';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { accountOf, callKey } from '../src/call-key.js';

const model = { provider: 'fake.chat', modelId: 'fake-model' };

const base: LanguageModelV4CallOptions = {
  prompt: [
    { role: 'system', content: 'be brief' },
    { role: 'user', content: [{ type: 'text', text: 'hello' }] },
  ],
  maxOutputTokens: 100,
  temperature: 0,
  stopSequences: ['END'],
  topP: 0.9,
  topK: 40,
  presencePenalty: 0,
  frequencyPenalty: 0,
  responseFormat: { type: 'text' },
  seed: 1,
  tools: [
    {
      type: 'function',
      name: 'weather',
      description: 'the weather',
      inputSchema: { type: 'object', properties: { city: { type: 'string' } } },
    },
  ],
  toolChoice: { type: 'auto' },
  includeRawChunks: false,
  headers: { 'x-trace': 'a' },
  reasoning: 'low',
  providerOptions: { fake: { user: 'u1' } },
};

/** One field of the call changed: each a change that can change the answer. */
const apart: Record<string, (p: LanguageModelV4CallOptions, v: string) => LanguageModelV4CallOptions> = {
  prompt: (p, v) => ({ ...p, prompt: [p.prompt[0]!, { role: 'user', content: [{ type: 'text', text: `hello ${v}` }] }] }),
  system: (p, v) => ({ ...p, prompt: [{ role: 'system', content: `be brief ${v}` }, p.prompt[1]!] }),
  file: (p, v) =>
    ({
      ...p,
      prompt: [
        p.prompt[0]!,
        { role: 'user', content: [{ type: 'file', mediaType: 'image/png', data: { type: 'data', data: new TextEncoder().encode(v) } }] },
      ],
    }) as LanguageModelV4CallOptions,
  fileUrl: (p, v) =>
    ({
      ...p,
      prompt: [
        p.prompt[0]!,
        {
          role: 'user',
          content: [
            {
              type: 'file',
              mediaType: 'image/png',
              data: { type: 'url', url: new URL(`https://example.com/${encodeURIComponent(v)}.png`) },
            },
          ],
        },
      ],
    }) as LanguageModelV4CallOptions,
  maxOutputTokens: (p, v) => ({ ...p, maxOutputTokens: 100 + v.length }),
  temperature: (p, v) => ({ ...p, temperature: v.length / 100 }),
  stopSequences: (p, v) => ({ ...p, stopSequences: ['END', v] }),
  topP: (p, v) => ({ ...p, topP: 0.5 + v.length / 1000 }),
  topK: (p, v) => ({ ...p, topK: 41 + v.length }),
  presencePenalty: (p, v) => ({ ...p, presencePenalty: v.length / 100 }),
  frequencyPenalty: (p, v) => ({ ...p, frequencyPenalty: v.length / 100 }),
  responseFormat: (p, v) => ({ ...p, responseFormat: { type: 'json', name: v } }),
  seed: (p, v) => ({ ...p, seed: 2 + v.length }),
  tools: (p, v) => ({ ...p, tools: [{ ...(p.tools![0] as object), description: `the weather ${v}` }] }) as LanguageModelV4CallOptions,
  toolChoice: (p, v) => ({ ...p, toolChoice: { type: 'tool', toolName: v } }),
  includeRawChunks: (p) => ({ ...p, includeRawChunks: true }),
  headers: (p, v) => ({ ...p, headers: { ...p.headers, authorization: `Bearer ${v}` } }),
  reasoning: (p) => ({ ...p, reasoning: 'high' }),
  providerOptions: (p, v) => ({ ...p, providerOptions: { fake: { user: `u-${v}` } } }),
  unknownField: (p, v) => ({ ...p, futureOption: v }) as LanguageModelV4CallOptions,
};

describe('callKey', () => {
  it('property: any one call option apart never shares a key', () => {
    const baseKey = callKey('ai', 'generate', model, 'acct', '', base);
    fc.assert(
      fc.property(fc.constantFrom(...Object.keys(apart)), fc.string({ minLength: 1, maxLength: 20 }), (field, value) => {
        expect(callKey('ai', 'generate', model, 'acct', '', apart[field]!(base, value))).not.toBe(baseKey);
      }),
    );
  });

  it('property: the model, its account, the scope and the kind of call are in the key', () => {
    const baseKey = callKey('ai', 'generate', model, 'acct', '', base);
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 20 }), (value) => {
        expect(callKey('ai', 'generate', { ...model, modelId: `fake-${value}` }, 'acct', '', base)).not.toBe(baseKey);
        expect(callKey('ai', 'generate', { ...model, provider: `fake.${value}` }, 'acct', '', base)).not.toBe(baseKey);
        expect(callKey('ai', 'generate', model, `acct-${value}`, '', base)).not.toBe(baseKey);
        expect(callKey('ai', 'generate', model, 'acct', value, base)).not.toBe(baseKey);
      }),
    );
    expect(callKey('ai', 'stream', model, 'acct', '', base)).not.toBe(baseKey);
  });

  it('the same call shares: the abort signal and the order of keys are not in the key', () => {
    const reordered = Object.fromEntries(Object.entries(base).reverse()) as LanguageModelV4CallOptions;
    const withSignal = { ...reordered, abortSignal: new AbortController().signal };
    expect(callKey('ai', 'generate', model, 'acct', '', withSignal)).toBe(callKey('ai', 'generate', model, 'acct', '', base));
  });

  it('options that are not plain data are not shared (undefined key)', () => {
    const odd = { ...base, providerOptions: { fake: { at: new Map() } } } as unknown as LanguageModelV4CallOptions;
    expect(callKey('ai', 'generate', model, 'acct', '', odd)).toBeUndefined();
  });

  it("the account: a provider's API key, account headers and base URL tell models apart; other headers do not", async () => {
    const of = (headers: Record<string, string>, baseURL = 'https://api.example/v1') =>
      accountOf({
        ...model,
        config: { headers: () => headers, url: ({ path }: { path: string }) => `${baseURL}${path}` },
      } as never);
    const first = await of({ Authorization: 'Bearer one', 'x-trace': 'a' });
    expect(await of({ authorization: 'Bearer one', 'x-trace': 'b' })).toBe(first);
    expect(await of({ Authorization: 'Bearer two', 'x-trace': 'a' })).not.toBe(first);
    expect(await of({ Authorization: 'Bearer one', 'OpenAI-Project': 'p' })).not.toBe(first);
    expect(await of({ Authorization: 'Bearer one' }, 'https://other.example/v1')).not.toBe(first);
    // No config: no account of its own (the scope names it).
    expect(await accountOf(model as never)).toBe('');
  });
});
