/** Concurrent request bursts over several nodes, plain and streamed (used by `pnpm demo` and the tests). */
import { readSse } from './sse.js';

export interface BurstResponse {
  status: number;
  role: string | null;
  node: string | null;
  body: any;
  ms: number;
}

export interface StatsSnapshot {
  calls: number;
  inFlight: number;
  maxInFlight: number;
  byStage: Record<string, number>;
  bySession: Record<string, { calls: number; inFlight: number; maxConcurrent: number }>;
  failures: Record<string, number>;
}

/** Sends `count` identical POSTs at once, spread round-robin over `nodeUrls`. Never rejects: network errors come back as status 0. */
export async function burst(
  nodeUrls: readonly string[],
  path: string,
  body: unknown,
  count: number,
  timeoutMs = 60_000,
): Promise<BurstResponse[]> {
  return Promise.all(Array.from({ length: count }, (_, i) => post(`${nodeUrls[i % nodeUrls.length]}${path}`, body, timeoutMs)));
}

export async function post(url: string, body: unknown, timeoutMs = 60_000): Promise<BurstResponse> {
  const started = Date.now();
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // keep the text
    }
    return {
      status: res.status,
      role: res.headers.get('x-flight-role'),
      node: res.headers.get('x-flight-node'),
      body: parsed,
      ms: Date.now() - started,
    };
  } catch (error) {
    return { status: 0, role: null, node: null, body: { error: String((error as Error)?.message ?? error) }, ms: Date.now() - started };
  }
}

/** One streamed call as its client saw it. */
export interface StreamResponse {
  status: number;
  node: string | null;
  /** From the `done` event (null when the stream failed). */
  role: string | null;
  /** Milliseconds from sending the request to the first `chunk` event (null without one). */
  firstChunkMs: number | null;
  /** When the first chunk arrived (`performance.now()` of this process), to compare callers with each other. */
  firstChunkAt: number | null;
  /** Milliseconds from sending the request to each chunk. */
  chunkMs: number[];
  /** The text of the chunks received, in order. */
  text: string;
  /** The `done` event's data, or the error body (HTTP error, `error` event or network failure). */
  done: any;
  error: any;
  ms: number;
}

/** Sends `count` identical streamed POSTs at once, spread round-robin over `nodeUrls`. Never rejects. */
export async function streamBurst(
  nodeUrls: readonly string[],
  path: string,
  body: unknown,
  count: number,
  timeoutMs = 60_000,
): Promise<StreamResponse[]> {
  return Promise.all(Array.from({ length: count }, (_, i) => streamPost(`${nodeUrls[i % nodeUrls.length]}${path}`, body, timeoutMs)));
}

/** One streamed POST, read as server-sent events (`chunk` {text}, then `done` or `error`). */
export async function streamPost(url: string, body: unknown, timeoutMs = 60_000): Promise<StreamResponse> {
  const started = performance.now();
  const out: StreamResponse = {
    status: 0,
    node: null,
    role: null,
    firstChunkMs: null,
    firstChunkAt: null,
    chunkMs: [],
    text: '',
    done: null,
    error: null,
    ms: 0,
  };
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    out.status = res.status;
    out.node = res.headers.get('x-flight-node');
    if (!res.ok || !res.body) {
      out.error = await res.json().catch(() => null);
    } else {
      for await (const event of readSse(res.body)) {
        const data = JSON.parse(event.data);
        if (event.event === 'chunk') {
          out.chunkMs.push(performance.now() - started);
          out.text += data.text;
        } else if (event.event === 'done') {
          out.done = data;
          out.role = data.role;
        } else if (event.event === 'error') {
          out.error = data;
        }
      }
    }
  } catch (error) {
    out.error = { error: String((error as Error)?.message ?? error) };
  }
  out.firstChunkMs = out.chunkMs[0] ?? null;
  out.firstChunkAt = out.firstChunkMs === null ? null : started + out.firstChunkMs;
  out.ms = performance.now() - started;
  return out;
}

export async function modelStats(modelUrl: string): Promise<StatsSnapshot> {
  const res = await fetch(`${modelUrl}/stats`);
  return (await res.json()) as StatsSnapshot;
}

export function countBy<T>(items: readonly T[], by: (item: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const item of items) out[by(item)] = (out[by(item)] ?? 0) + 1;
  return out;
}
