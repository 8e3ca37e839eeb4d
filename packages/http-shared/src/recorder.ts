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
  /** The result, once known; set synchronously when the handler answered before `record` returned (`res.json`). */
  readonly outcome?: RecordResult | undefined;
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

/** A written chunk as UTF-8 text (kept as the string it was written as) or bytes. */
type Piece = string | Buffer;

function toPiece(chunk: unknown, encoding: unknown): Piece {
  if (chunk === undefined || chunk === null) return '';
  if (typeof chunk === 'string') {
    return encoding === undefined || encoding === 'utf8' || encoding === 'utf-8' ? chunk : Buffer.from(chunk, encoding as BufferEncoding);
  }
  if (Buffer.isBuffer(chunk)) return chunk;
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  return String(chunk);
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

type Patchable = Record<Patched, unknown>;
const PATCHED: readonly Patched[] = ['writeHead', 'write', 'end', 'flushHeaders'];

/** The recorder of each response being recorded. */
const RECORDERS = new WeakMap<ServerResponse, ResponseRecorder>();

// The methods a recorded response gets: shared by every response (no closures per request); each finds its
// recorder by the response it is called on.
const recordingMethods: Record<Patched, (this: ServerResponse, ...args: any[]) => unknown> = {
  writeHead(status: number, reason?: unknown, headers?: unknown) {
    return RECORDERS.get(this)!.writeHead(status, reason, headers);
  },
  flushHeaders() {
    RECORDERS.get(this)!.flushHeaders();
  },
  write(chunk: unknown, encoding?: unknown, callback?: unknown) {
    return RECORDERS.get(this)!.write(chunk, encoding, callback);
  },
  end(chunk?: unknown, encoding?: unknown, callback?: unknown) {
    return RECORDERS.get(this)!.end(chunk, encoding, callback);
  },
};

/**
 * A prototype over `proto` whose methods record, one per prototype. Recording swaps a response's prototype
 * for it (and back): much cheaper than adding own methods to each response, which costs about 8 µs once
 * Express has set the response's prototype.
 */
const recordingPrototypes = new WeakMap<object, object>();
function recordingPrototype(proto: object): object {
  let recording = recordingPrototypes.get(proto);
  if (!recording) {
    const descriptors: PropertyDescriptorMap = {};
    for (const name of PATCHED) descriptors[name] = { value: recordingMethods[name], writable: true, configurable: true };
    recording = Object.create(proto, descriptors) as object;
    recordingPrototypes.set(proto, recording);
  }
  return recording;
}

/** A response finished while its recorder still recorded: its prototype was swapped again (a mounted Express sub-app). */
function onFinish(this: ServerResponse): void {
  RECORDERS.get(this)?.finishedElsewhere();
}

class ResponseRecorder implements OwnerRun {
  outcome: RecordResult | undefined;
  /** Made when first asked for (a handler that answers synchronously never needs it). */
  private promise: Promise<RecordResult> | undefined;
  private resolve: ((result: RecordResult) => void) | undefined;
  private readonly chunks: Piece[] = [];
  private size = 0;
  private headWritten = false;
  private state: 'recording' | 'complete' | 'streaming' | 'released' = 'recording';
  /** The prototype swapped out, or (when the response has methods of its own, patched by another middleware) undefined. */
  private readonly proto: object | undefined;
  /** The response's own methods before recording, when it had any. */
  private readonly saved: Patchable | undefined;

  constructor(
    private readonly res: ServerResponse,
    private readonly maxBodyBytes: number,
    private readonly head: boolean,
  ) {
    RECORDERS.set(res, this);
    const target = res as unknown as Patchable;
    if (Object.hasOwn(res, 'end') || Object.hasOwn(res, 'write') || Object.hasOwn(res, 'writeHead') || Object.hasOwn(res, 'flushHeaders')) {
      this.saved = { writeHead: target.writeHead, write: target.write, end: target.end, flushHeaders: target.flushHeaders };
      for (const name of PATCHED) target[name] = recordingMethods[name];
    } else {
      this.proto = Object.getPrototypeOf(res) as object;
      Object.setPrototypeOf(res, recordingPrototype(this.proto));
    }
    res.on('finish', onFinish);
  }

  get result(): Promise<RecordResult> {
    return (this.promise ??= this.outcome
      ? Promise.resolve(this.outcome)
      : new Promise<RecordResult>((resolve) => (this.resolve = resolve)));
  }

  /** Settles the recording once (later outcomes are ignored, as a promise ignores a second resolve). */
  private settle(result: RecordResult): void {
    if (this.outcome) return;
    this.outcome = result;
    this.resolve?.(result);
  }

  /** Puts the response's methods back (its prototype, or its own methods by assignment: `delete` would make it slow). */
  private restore(): void {
    const { res } = this;
    res.off('finish', onFinish);
    if (this.proto) {
      if (recordingPrototypes.get(this.proto) === Object.getPrototypeOf(res)) Object.setPrototypeOf(res, this.proto);
      return;
    }
    const target = res as unknown as Patchable;
    for (const name of PATCHED) target[name] = this.saved![name];
  }

  /** The response went out without passing through the recorder: nothing to share, nothing left to send. */
  finishedElsewhere(): void {
    if (this.state !== 'recording') return;
    this.restore();
    this.state = 'released';
    this.settle({ kind: 'unrecordable' });
  }

  /** From now on the handler writes to the client directly; flush what it wrote so far. */
  private streamThrough(): void {
    const { res } = this;
    this.state = 'streaming';
    this.restore();
    if (this.headWritten && !res.headersSent) res.writeHead(res.statusCode, res.statusMessage);
    for (const chunk of this.chunks.splice(0)) res.write(chunk);
  }

  private append(chunk: Piece): void {
    if (this.state !== 'recording' || chunk.length === 0) return;
    this.headWritten = true;
    if (this.head) return; // HEAD: Node drops the body; only the declared length matters.
    this.chunks.push(chunk);
    this.size += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
    if (this.size > this.maxBodyBytes) {
      this.streamThrough();
      this.settle({ kind: 'overflow' });
    }
  }

  /**
   * The body recorded so far: the chunk itself when there is one — a string stays the string it was
   * written as (`res.send`/`res.json` write one), sent and shared as text without a copy — else one buffer.
   */
  private body(): Piece {
    const { chunks } = this;
    if (chunks.length <= 1) return chunks[0] ?? '';
    return Buffer.concat(
      chunks.map((chunk) => (typeof chunk === 'string' ? Buffer.from(chunk) : chunk)),
      this.size,
    );
  }

  writeHead(status: number, reason?: unknown, headers?: unknown): ServerResponse {
    const { res } = this;
    if (this.state === 'recording') {
      res.statusCode = status;
      if (typeof reason === 'string') res.statusMessage = reason;
      else headers = reason;
      applyHeaders(res, headers);
      this.headWritten = true;
    }
    return res;
  }

  flushHeaders(): void {
    if (this.state === 'recording') this.headWritten = true;
  }

  write(chunk: unknown, encoding?: unknown, callback?: unknown): boolean {
    if (this.state === 'streaming') return (this.res.write as (...args: unknown[]) => boolean)(chunk, encoding, callback);
    if (typeof encoding === 'function') callback = encoding;
    this.append(toPiece(chunk, encoding));
    if (typeof callback === 'function') process.nextTick(callback as () => void);
    return true;
  }

  end(chunk?: unknown, encoding?: unknown, callback?: unknown): ServerResponse {
    const { res } = this;
    if (this.state === 'streaming') return (res.end as (...args: unknown[]) => ServerResponse)(chunk, encoding, callback);
    if (typeof chunk === 'function') [callback, chunk] = [chunk, undefined];
    if (typeof encoding === 'function') [callback, encoding] = [encoding, undefined];
    this.append(toPiece(chunk, encoding));
    if (this.state === 'recording') {
      this.state = 'complete';
      this.settle({ kind: 'complete', response: { status: res.statusCode, headers: res.getHeaders(), body: this.body() } });
    }
    if (typeof callback === 'function') process.nextTick(callback as () => void);
    return res;
  }

  /** The handler threw synchronously: nothing was recorded for the client. */
  fail(error: unknown): void {
    this.restore();
    this.state = 'released';
    this.settle({ kind: 'error', error, status: 500 });
  }

  release(): void {
    const { res } = this;
    if (this.state === 'complete') {
      this.state = 'released';
      this.restore();
      if (res.destroyed) return;
      if (this.head) res.end();
      else res.end(this.body());
      this.chunks.length = 0;
    } else if (this.state === 'recording') {
      // The owner gave up waiting (timeout): let the handler's response through as it comes.
      this.streamThrough();
    }
  }
}

/**
 * Starts recording `res`, then calls `run` (which invokes the downstream handler). Nothing reaches
 * the client until `release()` — or until the body passes `maxBodyBytes`.
 */
export function recordResponse(res: ServerResponse, options: { maxBodyBytes: number; head: boolean }, run: () => void): OwnerRun {
  const recorder = new ResponseRecorder(res, options.maxBodyBytes, options.head);
  try {
    run();
  } catch (error) {
    recorder.fail(error);
  }
  return recorder;
}
