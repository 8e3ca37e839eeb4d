/**
 * The CPU an uncontended @flight/openai call adds to the bare SDK call, without any network: the SDK's fetch
 * answers at once with a canned completion and the flights run on the in-memory coordinator. Per call, in
 * turn: the bare SDK call, the wrapped client's call, and `execute` around the bare call (the core alone).
 * `cd bench && node --conditions=@flight/source --import tsx profiles/openai-cpu.ts`
 */
import { randomUUID } from 'node:crypto';
import { createMemoryCoordinator, createSingleFlight } from '@flight/core';
import { withFlights } from '@flight/openai';
import OpenAI from 'openai';

const N = Number(process.env.N ?? 20_000);
const completion = JSON.stringify({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1,
  model: 'fake-model',
  choices: [{ index: 0, message: { role: 'assistant', content: 'hello there '.repeat(20) }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 },
});
const fetch: typeof globalThis.fetch = async () => new Response(completion, { headers: { 'content-type': 'application/json' } });
const sdk = () => new OpenAI({ baseURL: 'http://127.0.0.1:1/v1', apiKey: 'sk-bench', maxRetries: 0, fetch });
const flights = createSingleFlight({ coordinator: createMemoryCoordinator(), defaults: { l1: { enabled: false } } });
const clients = { bare: sdk(), wrapped: withFlights(sdk(), { flights, stage: 'bench' }), core: sdk() };
const ask = () => ({ model: 'fake-model', temperature: 0, messages: [{ role: 'user' as const, content: `p ${randomUUID()}` }] });
const spent = { bare: 0, wrapped: 0, core: 0 };
for (let i = 0; i < N; i++) {
  for (const name of ['bare', 'wrapped', 'core'] as const) {
    const started = performance.now();
    if (name === 'core')
      await flights.execute('bench', `k${i}`, () => clients.core.chat.completions.create(ask()), { storeInBackground: true });
    else await clients[name].chat.completions.create(ask());
    if (i >= N / 4) spent[name] += performance.now() - started;
  }
}
for (const [name, ms] of Object.entries(spent)) console.log(`${name.padEnd(8)} ${((ms / (N * 0.75)) * 1000).toFixed(1)} µs per call`);
await flights.close();
process.exit(0);
