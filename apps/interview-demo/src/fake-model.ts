/**
 * The bundled fake model: a separate process speaking the OpenAI chat-completions API.
 *
 * - Deterministic: the same messages always give the same answer (derived from a SHA-256 of them).
 * - Latency: `MODEL_LATENCY_MS` (default 300), or `[latency:1500]` anywhere in the prompt.
 * - Streaming: a request with `stream: true` is answered with server-sent events in the OpenAI format
 *   (`data: {chat.completion.chunk}` lines, then `data: [DONE]`): after the latency, one token every
 *   1000 / rate ms, the rate from `MODEL_TOKENS_PER_SEC` (default 40) or `[tokens-per-sec:80]` in the prompt.
 * - `[format:text]` in the prompt asks for prose instead of JSON (the streamed stages use it).
 * - `[cut-after:5]` in the prompt: a streamed answer's connection is dropped after 5 tokens, no `[DONE]`.
 * - Failure injection, per request by prompt marker — `[fail:429]`, `[fail:500]`, `[fail:400]`,
 *   `[fail:timeout]` (never answers), `[fail-once:500]` (only the first call of that prompt fails) —
 *   or for the next N calls through `POST /admin/faults {"fault":"429","count":3}`.
 * - `GET /stats` counts the calls it received (the ground truth for deduplication), per stage, per
 *   session (with the highest number of concurrent calls seen) and per prompt; `POST /reset` zeroes it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Fault = '429' | '500' | '502' | '400' | 'timeout';
const FAULTS: readonly Fault[] = ['429', '500', '502', '400', 'timeout'];

export interface FakeModelStats {
  calls: number;
  /** Of which answered as a stream (`stream: true`). */
  streamed: number;
  inFlight: number;
  maxInFlight: number;
  failures: Record<string, number>;
  byStage: Record<string, number>;
  bySession: Record<string, { calls: number; inFlight: number; maxConcurrent: number }>;
  byPrompt: Record<string, number>;
}

export interface FakeModelOptions {
  port?: number;
  host?: string;
  latencyMs?: number;
  /** Tokens per second of a streamed answer. @default 40 */
  tokensPerSecond?: number;
}

function emptyStats(): FakeModelStats {
  return { calls: 0, streamed: 0, inFlight: 0, maxInFlight: 0, failures: {}, byStage: {}, bySession: {}, byPrompt: {} };
}

const marker = (text: string, name: string) => new RegExp(`\\[${name}:([^\\]\\s]+)\\]`).exec(text)?.[1];

/**
 * The answer of the fake model for a prompt, by stage: JSON text, as the invoker asks for, or prose
 * when `format` is `text`.
 */
export function fakeAnswer(stage: string, digest: string, format: 'json' | 'text' = 'json'): string {
  const n = parseInt(digest.slice(0, 8), 16);
  if (format === 'text') return fakeProse(stage, digest, n);
  switch (stage) {
    case 'interview-evaluation':
      return JSON.stringify({
        score: 50 + (n % 51),
        verdict: ['weak', 'fair', 'good', 'strong'][n % 4],
        feedback: `Answer assessed (ref ${digest.slice(0, 10)}): structure ${n % 5}/4, depth ${(n >> 3) % 5}/4.`,
      });
    case 'interview-followup':
      return JSON.stringify({
        question: `Follow-up #${digest.slice(0, 6)}: can you walk through a trade-off you made there, and what you would change with ${(n % 9) + 2}x the load?`,
      });
    case 'interview-extraction':
      return JSON.stringify({
        questions: [1, 2, 3].map((i) => `Q${i} (${digest.slice(i * 4, i * 4 + 6)}): tell me about item ${(n >> i) % 7} of your résumé.`),
      });
    case 'interview-demeanor':
      return JSON.stringify({
        engagement: ((n % 100) / 100).toFixed(2),
        posture: ['upright', 'relaxed', 'leaning', 'tense'][n % 4],
        note: `frame ${digest.slice(0, 8)} analysed`,
      });
    default:
      return `echo ${digest.slice(0, 16)}`;
  }
}

function fakeProse(stage: string, digest: string, n: number): string {
  switch (stage) {
    case 'interview-evaluation':
      return (
        `Score ${50 + (n % 51)}/100, ${['weak', 'fair', 'good', 'strong'][n % 4]}. The answer is structured (${n % 5}/4) and goes ` +
        `${['barely', 'somewhat', 'fairly', 'well'][Math.floor(n / 8) % 4]} into depth; it names the trade-off but could give a concrete ` +
        `example from production and say what was measured. (ref ${digest.slice(0, 10)})`
      );
    case 'interview-followup':
      return (
        `Follow-up #${digest.slice(0, 6)}: you said one caller runs the work while the others wait. Walk me through what happens ` +
        `when that caller's process dies halfway, and what you would change with ${(n % 9) + 2}x the load?`
      );
    default:
      return `Echo ${digest.slice(0, 16)}: a plain-text answer of the fake model, streamed token by token.`;
  }
}

/** An answer cut into model-like tokens: a word with its leading space, long words in pieces of at most 6 characters. */
export function fakeTokens(content: string): string[] {
  return content.match(/\s*\S{1,6}|\s+$/g) ?? [];
}

export interface FakeModel {
  readonly server: Server;
  readonly url: string;
  readonly port: number;
  stats(): FakeModelStats;
  close(): Promise<void>;
}

/**
 * Writes a streamed chat completion as the OpenAI API does: `data: {chat.completion.chunk}` events (the
 * role first, then one token each `intervalMs`, then the finish reason and, when asked, the usage), then
 * `data: [DONE]`. Stops early when the client goes away; with `cutAfter`, drops the connection after that many tokens.
 */
async function streamAnswer(
  res: ServerResponse,
  answer: {
    id: string;
    model: string;
    tokens: readonly string[];
    intervalMs: number;
    usage: Record<string, number> | undefined;
    cutAfter: number | undefined;
  },
): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const started = performance.now();
  const chunk = (delta: Record<string, string>, finishReason: string | null, extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ id: answer.id, object: 'chat.completion.chunk', created: 1_700_000_000, model: answer.model, choices: [{ index: 0, delta, finish_reason: finishReason }], ...extra })}\n\n`;
  res.write(chunk({ role: 'assistant', content: '' }, null));
  for (let i = 0; i < answer.tokens.length; i++) {
    // Paced on the start time, so timer lateness does not add up over the answer.
    const wait = started + (i + 1) * answer.intervalMs - performance.now();
    if (wait > 0) await sleep(wait);
    if (res.destroyed) return;
    if (i === answer.cutAfter) return void res.destroy();
    res.write(chunk({ content: answer.tokens[i]! }, null));
  }
  res.write(chunk({}, 'stop'));
  if (answer.usage)
    res.write(
      `data: ${JSON.stringify({ id: answer.id, object: 'chat.completion.chunk', created: 1_700_000_000, model: answer.model, choices: [], usage: answer.usage })}\n\n`,
    );
  res.end('data: [DONE]\n\n');
}

export async function startFakeModel(options: FakeModelOptions = {}): Promise<FakeModel> {
  let stats = emptyStats();
  const defaultLatency = options.latencyMs ?? 300;
  const defaultRate = options.tokensPerSecond ?? 40;
  const seenPrompts = new Set<string>();
  let queued: { fault: Fault; count: number } | undefined;
  let latencyOverride: number | undefined;
  const hanging = new Set<ServerResponse>();

  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };

  const readBody = async (req: IncomingMessage): Promise<string> => {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > 1024 * 1024) throw new Error('body too large');
      chunks.push(chunk as Buffer);
    }
    return Buffer.concat(chunks).toString('utf8');
  };

  async function completions(req: IncomingMessage, res: ServerResponse) {
    let body: any;
    try {
      body = JSON.parse(await readBody(req));
    } catch {
      return json(res, 400, { error: { message: 'invalid JSON body', type: 'invalid_request_error' } });
    }
    if (!Array.isArray(body?.messages) || body.messages.length === 0) {
      return json(res, 400, { error: { message: 'messages must be a non-empty array', type: 'invalid_request_error' } });
    }
    const text = body.messages.map((m: any) => `${m?.role}:${m?.content}`).join('\n');
    const digest = createHash('sha256').update(text).digest('hex');
    const stage = marker(text, 'stage') ?? 'unknown';
    const session = marker(text, 'session') ?? '-';

    stats.calls++;
    stats.byStage[stage] = (stats.byStage[stage] ?? 0) + 1;
    stats.byPrompt[digest.slice(0, 16)] = (stats.byPrompt[digest.slice(0, 16)] ?? 0) + 1;
    const perSession = (stats.bySession[session] ??= { calls: 0, inFlight: 0, maxConcurrent: 0 });
    perSession.calls++;
    perSession.inFlight++;
    perSession.maxConcurrent = Math.max(perSession.maxConcurrent, perSession.inFlight);
    stats.inFlight++;
    stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
    const generation = stats;
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      // After a reset the counters belong to a new generation: leave them alone.
      if (generation !== stats) return;
      perSession.inFlight--;
      stats.inFlight--;
    };
    res.on('close', finish);

    let fault: Fault | undefined;
    const failMarker = marker(text, 'fail') as Fault | undefined;
    const failOnce = marker(text, 'fail-once') as Fault | undefined;
    if (failMarker && FAULTS.includes(failMarker)) fault = failMarker;
    else if (failOnce && FAULTS.includes(failOnce) && !seenPrompts.has(digest)) fault = failOnce;
    else if (queued && queued.count > 0) {
      fault = queued.fault;
      if (--queued.count === 0) queued = undefined;
    }
    seenPrompts.add(digest);

    const latency = Number(marker(text, 'latency') ?? latencyOverride ?? defaultLatency);
    if (fault === 'timeout') {
      stats.failures.timeout = (stats.failures.timeout ?? 0) + 1;
      hanging.add(res);
      const timer = setTimeout(() => res.destroy(), 120_000);
      res.on('close', () => {
        clearTimeout(timer);
        hanging.delete(res);
      });
      return;
    }
    await sleep(Number.isFinite(latency) ? Math.max(0, latency) : defaultLatency);
    if (res.destroyed) return finish();
    if (fault) {
      stats.failures[fault] = (stats.failures[fault] ?? 0) + 1;
      const status = Number(fault);
      const message = status === 429 ? 'rate limit reached' : status === 400 ? 'invalid request (injected)' : 'upstream error (injected)';
      json(res, status, { error: { message, type: status === 400 ? 'invalid_request_error' : 'server_error', code: fault } });
      return finish();
    }
    const content = fakeAnswer(stage, digest, marker(text, 'format') === 'text' ? 'text' : 'json');
    const usage = {
      prompt_tokens: Math.ceil(text.length / 4),
      completion_tokens: Math.ceil(content.length / 4),
      total_tokens: Math.ceil((text.length + content.length) / 4),
    };
    if (body.stream === true) {
      stats.streamed++;
      const rate = Number(marker(text, 'tokens-per-sec') ?? defaultRate);
      await streamAnswer(res, {
        id: `chatcmpl-${digest.slice(0, 24)}`,
        model: String(body.model ?? 'fake-model'),
        tokens: fakeTokens(content),
        intervalMs: Number.isFinite(rate) && rate > 0 ? 1000 / rate : 1000 / defaultRate,
        usage: body.stream_options?.include_usage === true ? usage : undefined,
        cutAfter: marker(text, 'cut-after') === undefined ? undefined : Number(marker(text, 'cut-after')),
      });
      return finish();
    }
    json(res, 200, {
      id: `chatcmpl-${digest.slice(0, 24)}`,
      object: 'chat.completion',
      created: 1_700_000_000,
      model: String(body.model ?? 'fake-model'),
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      usage,
    });
    finish();
  }

  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const route = `${req.method} ${path}`;
    const handle = async () => {
      switch (route) {
        case 'POST /v1/chat/completions':
        case 'POST /chat/completions':
          return completions(req, res);
        case 'GET /v1/models':
          return json(res, 200, { object: 'list', data: [{ id: 'fake-model', object: 'model', owned_by: 'flight-demo' }] });
        case 'GET /stats':
          return json(res, 200, stats);
        case 'GET /healthz':
          return json(res, 200, { ok: true });
        case 'POST /reset':
          stats = emptyStats();
          seenPrompts.clear();
          queued = undefined;
          latencyOverride = undefined;
          return json(res, 200, { ok: true });
        case 'POST /admin/faults': {
          const body = JSON.parse((await readBody(req)) || '{}');
          if (body.fault !== undefined && !FAULTS.includes(body.fault))
            return json(res, 400, { error: `fault must be one of ${FAULTS.join(', ')}` });
          queued = body.fault ? { fault: body.fault, count: Math.max(1, Number(body.count ?? 1)) } : undefined;
          if (body.latencyMs !== undefined) latencyOverride = body.latencyMs === null ? undefined : Number(body.latencyMs);
          return json(res, 200, { ok: true, queued: queued ?? null, latencyMs: latencyOverride ?? defaultLatency });
        }
        default:
          return json(res, 404, { error: `no route ${route}` });
      }
    };
    handle().catch((error) => {
      if (!res.headersSent) json(res, 500, { error: String(error?.message ?? error) });
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    server,
    port,
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    stats: () => stats,
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
