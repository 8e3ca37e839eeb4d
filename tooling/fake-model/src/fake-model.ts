/**
 * The bundled fake model: a separate process speaking the OpenAI API — chat completions, the Responses
 * API and embeddings (wire shapes in wire.ts).
 *
 * - Deterministic: the same messages always give the same answer (derived from a SHA-256 of them).
 * - Latency: `MODEL_LATENCY_MS` (default 300), or `[latency:1500]` anywhere in the prompt.
 * - Streaming: a request with `stream: true` is answered with server-sent events in the OpenAI format
 *   (`data: {chat.completion.chunk}` lines, then `data: [DONE]`): after the latency, one token every
 *   1000 / rate ms, the rate from `MODEL_TOKENS_PER_SEC` (default 40) or `[tokens-per-sec:80]` in the prompt.
 * - `[format:text]` in the prompt asks for prose instead of JSON (the streamed stages use it).
 * - `[cut-after:5]` in the prompt: a streamed answer's connection is dropped after 5 tokens, no `[DONE]`;
 *   `[end-after:5]`: the response ends cleanly after 5 tokens, without the finish reason or `[DONE]`.
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
import { chatAnswer, embeddingsAnswer, promptOf, responseAnswer, streamAnswer, type ModelApi } from './wire.js';

export { fakeEmbedding, type ModelApi } from './wire.js';

export type Fault = '429' | '500' | '502' | '400' | 'timeout';
const FAULTS: readonly Fault[] = ['429', '500', '502', '400', 'timeout'];

export interface FakeModelStats {
  calls: number;
  /** Of which answered as a stream (`stream: true`). */
  streamed: number;
  /** Calls by API. */
  byApi: Record<ModelApi, number>;
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
  return {
    calls: 0,
    streamed: 0,
    byApi: { chat: 0, responses: 0, embeddings: 0 },
    inFlight: 0,
    maxInFlight: 0,
    failures: {},
    byStage: {},
    bySession: {},
    byPrompt: {},
  };
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

  /** One model call of `api`: counted, then failed as injected, or answered (JSON, or streamed when asked). */
  async function modelCall(api: ModelApi, req: IncomingMessage, res: ServerResponse) {
    let body: any;
    try {
      body = JSON.parse(await readBody(req));
    } catch {
      return json(res, 400, { error: { message: 'invalid JSON body', type: 'invalid_request_error' } });
    }
    const prompt = promptOf(api, body);
    if ('invalid' in prompt) return json(res, 400, { error: { message: prompt.invalid, type: 'invalid_request_error' } });
    const { text } = prompt;
    const digest = createHash('sha256').update(text).digest('hex');
    const stage = marker(text, 'stage') ?? 'unknown';
    const session = marker(text, 'session') ?? '-';

    stats.calls++;
    stats.byApi[api]++;
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
    if (api === 'embeddings') {
      json(res, 200, embeddingsAnswer(body));
      return finish();
    }
    const content = fakeAnswer(stage, digest, marker(text, 'format') === 'text' ? 'text' : 'json');
    const id = digest.slice(0, 24);
    const model = String(body.model ?? 'fake-model');
    if (body.stream === true) {
      stats.streamed++;
      const rate = Number(marker(text, 'tokens-per-sec') ?? defaultRate);
      const cut = marker(text, 'cut-after');
      const end = marker(text, 'end-after');
      await streamAnswer(res, {
        api,
        id,
        model,
        prompt: text,
        content,
        tokens: fakeTokens(content),
        intervalMs: Number.isFinite(rate) && rate > 0 ? 1000 / rate : 1000 / defaultRate,
        includeUsage: body.stream_options?.include_usage === true,
        cutAfter: cut === undefined ? undefined : Number(cut),
        endAfter: end === undefined ? undefined : Number(end),
      });
      return finish();
    }
    json(res, 200, api === 'chat' ? chatAnswer(id, model, text, content) : responseAnswer(id, model, text, content));
    finish();
  }

  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const route = `${req.method} ${path}`;
    const handle = async () => {
      switch (route) {
        case 'POST /v1/chat/completions':
        case 'POST /chat/completions':
          return modelCall('chat', req, res);
        case 'POST /v1/responses':
        case 'POST /responses':
          return modelCall('responses', req, res);
        case 'POST /v1/embeddings':
        case 'POST /embeddings':
          return modelCall('embeddings', req, res);
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
