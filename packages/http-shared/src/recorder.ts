/**
 * Records what a handler writes to a Node `ServerResponse` (status, headers, `write`/`end` chunks —
 * which covers `res.send`, `res.json`, `stream.pipe(res)` and `res.sendFile`) without sending
 * anything, so the owner's response can be shared before it is released to its own client.
 * Above the body cap the recording gives up and the response streams on to the client unchanged.
 */
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { CapturedResponse } from './response.js';

/** How a recording ended. `overflow`: the body passed the cap; the response now streams to its client. */
export type RecordResult =
  | { kind: 'complete'; response: CapturedResponse }
  | { kind: 'overflow' }
  /** The handler answered in a way that cannot be recorded (e.g. Koa's `ctx.respond = false`). */
  | { kind: 'unrecordable' }
  | { kind: 'error'; error: unknown; status: number };

/** A handler run whose response is being recorded. */
export interface OwnerRun {
  readonly result: Promise<RecordResult>;
  /**
   * Hands the response to the client: the recorded response when complete, otherwise what was
   * recorded so far followed by the rest as the handler writes it. Call it once the flight is settled,
   * even when the handler has not finished (the flight gave up on it): an adapter whose framework sends
   * the response when the middleware returns (Koa) resolves only once the handler has answered, so the
   * client gets the handler's own response and nothing is written after it was sent.
   * May reject with the handler's own error (Koa) so the framework answers it as usual.
   */
  release(): Promise<void> | void;
}

type Patched = 'writeHead' | 'write' | 'end' | 'flushHeaders';

function toBuffer(chunk: unknown, encoding: unknown): Buffer {
  if (chunk === undefined || chunk === null) return Buffer.alloc(0);
  if (typeof chunk === 'string') return Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
  if (Buffer.isBuffer(chunk)) return chunk;
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  return Buffer.from(String(chunk));
}

function applyHeaders(res: ServerResponse, headers: unknown): void {
  if (!headers) return;
  if (Array.isArray(headers)) {
    // Either [[name, value], …] or the flat [name, value, name, value, …] form.
    const pairs: [string, string][] = Array.isArray(headers[0])
      ? (headers as [string, string][])
      : Array.from({ length: Math.floor(headers.length / 2) }, (_, i) => [String(headers[2 * i]), String(headers[2 * i + 1])]);
    const grouped = new Map<string, string[]>();
    for (const [name, value] of pairs) grouped.set(name, [...(grouped.get(name) ?? []), value]);
    for (const [name, values] of grouped) res.setHeader(name, values.length === 1 ? values[0]! : values);
    return;
  }
  for (const [name, value] of Object.entries(headers as OutgoingHttpHeaders)) {
    if (value !== undefined) res.setHeader(name, value);
  }
}

/**
 * Starts recording `res`, then calls `run` (which invokes the downstream handler). Nothing reaches
 * the client until `release()` — or until the body passes `maxBodyBytes`.
 */
export function recordResponse(res: ServerResponse, options: { maxBodyBytes: number; head: boolean }, run: () => void): OwnerRun {
  const target = res as unknown as Record<Patched, unknown>;
  // The methods in place now (the prototype's, or another middleware's). Restored by assignment, never by
  // `delete`: deleting own properties turns every response object into a slow dictionary-mode object.
  const saved = { writeHead: target.writeHead, write: target.write, end: target.end, flushHeaders: target.flushHeaders };
  const chunks: Buffer[] = [];
  let size = 0;
  let headWritten = false;
  let state: 'recording' | 'complete' | 'streaming' | 'released' = 'recording';
  let settle!: (result: RecordResult) => void;
  const result = new Promise<RecordResult>((resolve) => (settle = resolve));

  const restore = () => {
    target.writeHead = saved.writeHead;
    target.write = saved.write;
    target.end = saved.end;
    target.flushHeaders = saved.flushHeaders;
  };

  /** From now on the handler writes to the client directly; flush what it wrote so far. */
  const streamThrough = () => {
    state = 'streaming';
    restore();
    if (headWritten && !res.headersSent) res.writeHead(res.statusCode, res.statusMessage);
    for (const chunk of chunks.splice(0)) res.write(chunk);
  };

  const append = (chunk: Buffer) => {
    if (state !== 'recording' || chunk.length === 0) return;
    headWritten = true;
    if (options.head) return; // HEAD: Node drops the body; only the declared length matters.
    chunks.push(chunk);
    size += chunk.length;
    if (size > options.maxBodyBytes) {
      streamThrough();
      settle({ kind: 'overflow' });
    }
  };

  target.writeHead = function writeHead(status: number, reason?: unknown, headers?: unknown) {
    if (state === 'recording') {
      res.statusCode = status;
      if (typeof reason === 'string') res.statusMessage = reason;
      else headers = reason;
      applyHeaders(res, headers);
      headWritten = true;
    }
    return res;
  };
  target.flushHeaders = function flushHeaders() {
    if (state === 'recording') headWritten = true;
  };
  target.write = function write(chunk: unknown, encoding?: unknown, callback?: unknown) {
    // eslint-disable-next-line prefer-rest-params
    if (state === 'streaming') return (res.write as (...args: unknown[]) => boolean)(...arguments);
    if (typeof encoding === 'function') callback = encoding;
    append(toBuffer(chunk, encoding));
    if (typeof callback === 'function') process.nextTick(callback as () => void);
    return true;
  };
  target.end = function end(chunk?: unknown, encoding?: unknown, callback?: unknown) {
    // eslint-disable-next-line prefer-rest-params
    if (state === 'streaming') return (res.end as (...args: unknown[]) => ServerResponse)(...arguments);
    if (typeof chunk === 'function') [callback, chunk] = [chunk, undefined];
    if (typeof encoding === 'function') [callback, encoding] = [encoding, undefined];
    append(toBuffer(chunk, encoding));
    if (state === 'recording') {
      state = 'complete';
      settle({
        kind: 'complete',
        response: { status: res.statusCode, headers: res.getHeaders(), body: Buffer.concat(chunks, size) },
      });
    }
    if (typeof callback === 'function') process.nextTick(callback as () => void);
    return res;
  };

  try {
    run();
  } catch (error) {
    restore();
    state = 'released';
    settle({ kind: 'error', error, status: 500 });
  }

  return {
    result,
    release() {
      if (state === 'complete') {
        state = 'released';
        restore();
        if (res.destroyed) return;
        if (options.head) res.end();
        else res.end(Buffer.concat(chunks.splice(0), size));
      } else if (state === 'recording') {
        // The owner gave up waiting (timeout): let the handler's response through as it comes.
        streamThrough();
      }
    },
  };
}
