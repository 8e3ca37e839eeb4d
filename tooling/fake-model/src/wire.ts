/**
 * The three OpenAI APIs the fake model speaks, on the wire: what text a request asks about (its prompt,
 * which decides the answer), and the JSON or server-sent events of an answer, shaped as the API sends them.
 */
import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

export type ModelApi = 'chat' | 'responses' | 'embeddings';

/** Text of a content value: a string, or the text parts of a content array. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part: any) => (typeof part === 'string' ? part : typeof part?.text === 'string' ? part.text : '')).join('');
}

/** The prompt of a request, or an error message for a request the API would refuse. */
export function promptOf(api: ModelApi, body: any): { text: string } | { invalid: string } {
  if (api === 'chat') {
    if (!Array.isArray(body?.messages) || body.messages.length === 0) return { invalid: 'messages must be a non-empty array' };
    return { text: body.messages.map((m: any) => `${m?.role}:${contentText(m?.content)}`).join('\n') };
  }
  if (api === 'responses') {
    const input = body?.input;
    const items =
      typeof input === 'string'
        ? [`user:${input}`]
        : Array.isArray(input)
          ? input.map((m: any) => `${m?.role ?? 'user'}:${contentText(m?.content)}`)
          : [];
    if (items.length === 0) return { invalid: 'input must be a string or a non-empty array' };
    return { text: [...(typeof body.instructions === 'string' ? [`system:${body.instructions}`] : []), ...items].join('\n') };
  }
  const inputs = typeof body?.input === 'string' ? [body.input] : Array.isArray(body?.input) ? body.input : [];
  if (inputs.length === 0 || !inputs.every((x: unknown) => typeof x === 'string'))
    return { invalid: 'input must be a string or an array of strings' };
  return { text: inputs.join('\n') };
}

const usageOf = (prompt: string, content: string) => ({ in: Math.ceil(prompt.length / 4), out: Math.ceil(content.length / 4) });

/** A deterministic unit vector of `dims` numbers for a text. */
export function fakeEmbedding(text: string, dims = 8): number[] {
  const digest = createHash('sha256').update(text).digest();
  const raw = Array.from({ length: dims }, (_, i) => digest.readInt16LE((i * 2) % 30) / 32768);
  const norm = Math.hypot(...raw) || 1;
  return raw.map((x) => Math.fround(x / norm));
}

/** The JSON body of an embeddings answer; floats, or base64 of little-endian float32 as the SDK asks by default. */
export function embeddingsAnswer(body: any): unknown {
  const inputs: string[] = typeof body.input === 'string' ? [body.input] : body.input;
  const base64 = body.encoding_format === 'base64';
  const tokens = Math.ceil(inputs.join('').length / 4);
  return {
    object: 'list',
    model: String(body.model ?? 'fake-embedding'),
    data: inputs.map((text, index) => {
      const vector = fakeEmbedding(text, Number(body.dimensions ?? 8));
      return {
        object: 'embedding',
        index,
        embedding: base64 ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector,
      };
    }),
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}

/** The JSON body of a chat completion. */
export function chatAnswer(id: string, model: string, prompt: string, content: string): unknown {
  const u = usageOf(prompt, content);
  return {
    id: `chatcmpl-${id}`,
    object: 'chat.completion',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: u.in, completion_tokens: u.out, total_tokens: u.in + u.out },
  };
}

/** The JSON body of a Responses API answer (`status` completed, or in progress for its first event). */
export function responseAnswer(
  id: string,
  model: string,
  prompt: string,
  content: string,
  status: 'completed' | 'in_progress' = 'completed',
) {
  const u = usageOf(prompt, content);
  const done = status === 'completed';
  return {
    id: `resp_${id}`,
    object: 'response',
    created_at: 1_700_000_000,
    status,
    model,
    output: done
      ? [
          {
            type: 'message',
            id: `msg_${id}`,
            status: 'completed',
            role: 'assistant',
            content: [{ type: 'output_text', text: content, annotations: [] }],
          },
        ]
      : [],
    usage: done ? { input_tokens: u.in, output_tokens: u.out, total_tokens: u.in + u.out } : null,
  };
}

export interface StreamedAnswer {
  api: 'chat' | 'responses';
  id: string;
  model: string;
  prompt: string;
  content: string;
  tokens: readonly string[];
  intervalMs: number;
  /** Chat: a last chunk with the usage (`stream_options.include_usage`). */
  includeUsage: boolean;
  /** Drops the connection after this many tokens. */
  cutAfter: number | undefined;
  /** Ends the response cleanly after this many tokens, without the last events. */
  endAfter?: number | undefined;
}

/**
 * Writes a streamed answer as the API does, one token each `intervalMs`: chat `chat.completion.chunk`
 * events (the role first, then the tokens, the finish reason, the usage when asked) and `data: [DONE]`;
 * responses `response.created`, `response.output_text.delta` events and `response.completed`. Stops
 * when the client goes away; with `cutAfter`, drops the connection after that many tokens; with
 * `endAfter`, ends the response there as if it were complete.
 */
export async function streamAnswer(res: ServerResponse, answer: StreamedAnswer): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const started = performance.now();
  let sequence = 0;
  const chat = (delta: Record<string, string>, finishReason: string | null, extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ id: `chatcmpl-${answer.id}`, object: 'chat.completion.chunk', created: 1_700_000_000, model: answer.model, choices: [{ index: 0, delta, finish_reason: finishReason }], ...extra })}\n\n`;
  const event = (type: string, fields: Record<string, unknown>) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...fields })}\n\n`;
  /** Writes `text`; resolves once it was handed to the socket. */
  const write = (text: string) => new Promise<void>((resolve) => res.write(text, () => resolve()));
  let written =
    answer.api === 'chat'
      ? write(chat({ role: 'assistant', content: '' }, null))
      : write(event('response.created', { response: responseAnswer(answer.id, answer.model, answer.prompt, '', 'in_progress') }));
  for (let i = 0; i < answer.tokens.length; i++) {
    // Paced on the start time, so timer lateness does not add up over the answer.
    const wait = started + (i + 1) * answer.intervalMs - performance.now();
    if (wait > 0) await sleep(wait);
    if (res.destroyed) return;
    // A cut drops the connection once what was written reached the socket, as a peer that dies does.
    if (i === answer.cutAfter) return void written.then(() => res.destroy());
    if (i === answer.endAfter) return void res.end();
    const token = answer.tokens[i]!;
    written = write(
      answer.api === 'chat'
        ? chat({ content: token }, null)
        : event('response.output_text.delta', { item_id: `msg_${answer.id}`, output_index: 0, content_index: 0, delta: token }),
    );
  }
  if (answer.api === 'responses') {
    res.end(event('response.completed', { response: responseAnswer(answer.id, answer.model, answer.prompt, answer.content) }));
    return;
  }
  res.write(chat({}, 'stop'));
  if (answer.includeUsage) {
    const u = usageOf(answer.prompt, answer.content);
    res.write(
      `data: ${JSON.stringify({ id: `chatcmpl-${answer.id}`, object: 'chat.completion.chunk', created: 1_700_000_000, model: answer.model, choices: [], usage: { prompt_tokens: u.in, completion_tokens: u.out, total_tokens: u.in + u.out } })}\n\n`,
    );
  }
  res.end('data: [DONE]\n\n');
}
