/**
 * Records what a handler writes to a Node `ServerResponse` (status, headers, `write`/`end` chunks —
 * which covers `res.send`, `res.json`, `stream.pipe(res)` and `res.sendFile`) without sending
 * anything, so the owner's response can be shared before it is released to its own client.
 * Above the body cap the recording gives up and the response streams on to the client unchanged.
 */
import { ServerResponse, type OutgoingHttpHeaders } from 'node:http';
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
export type Piece = string | Buffer;

export function toPiece(chunk: unknown, encoding: unknown): Piece {
  if (chunk === undefined || chunk === null) return '';
  if (typeof chunk === 'string') {
    return encoding === undefined || encoding === 'utf8' || encoding === 'utf-8' ? chunk : Buffer.from(chunk, encoding as BufferEncoding);
  }
  if (Buffer.isBuffer(chunk)) return chunk;
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  return String(chunk);
}

export function applyHeaders(res: ServerResponse, headers: unknown): void {
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

/**
 * The recorder of each response being recorded. Kept after a `swap` or `own` recording stops, so that a
 * method reference taken while recording still reaches the response's own methods (through the recorder);
 * removed after a `layer` recording, whose interceptor then passes every call on.
 */
const RECORDERS = new WeakMap<ServerResponse, ResponseRecorder>();

/**
 * An object over `below` whose `writeHead`/`write`/`end`/`flushHeaders` go to the recorder of the response
 * they are called on, or (a response not being recorded) on to `below`'s. Made once per prototype, so a
 * recording costs no closure and no property per response.
 */
function interceptor(below: object): object {
  const next = below as Record<Patched, (...args: unknown[]) => unknown>;
  const methods: Record<Patched, (this: ServerResponse, ...args: unknown[]) => unknown> = {
    writeHead(...args) {
      const recorder = RECORDERS.get(this);
      return recorder ? recorder.writeHead(args[0] as number, args[1], args[2]) : next.writeHead.apply(this, args);
    },
    flushHeaders(...args) {
      const recorder = RECORDERS.get(this);
      return recorder ? recorder.flushHeaders() : next.flushHeaders.apply(this, args);
    },
    write(...args) {
      const recorder = RECORDERS.get(this);
      return recorder ? recorder.write(args[0], args[1], args[2]) : next.write.apply(this, args);
    },
    end(...args) {
      const recorder = RECORDERS.get(this);
      return recorder ? recorder.end(args[0], args[1], args[2]) : next.end.apply(this, args);
    },
  };
  const descriptors: PropertyDescriptorMap = {};
  for (const name of PATCHED) descriptors[name] = { value: methods[name], writable: true, configurable: true };
  return Object.create(below, descriptors) as object;
}

/**
 * How a response's methods are intercepted while it is recorded, cheapest first:
 * - `layer`: its prototype is a framework's own (Express's `app.response`, which a mounted sub-app's
 *   `response` inherits from) that does not define the methods itself: an interceptor is installed once
 *   under that prototype, and recording a response is only registering its recorder. Swapping a response's
 *   prototype per request costs a new hidden class each time (about 2.4 KB and several µs per request), and
 *   makes Node's own response code see responses of several shapes.
 * - `swap`: a response whose prototype is Node's (Fastify, plain `node:http`) gets the cached
 *   interceptor over its prototype as prototype while recorded, and its own back after.
 * - `own`: a response that has methods of its own (patched by another middleware, e.g. compression) gets
 *   the interceptor's methods as own methods, and its own back after (by assignment: `delete` would make
 *   it slow).
 */
type Interception = { kind: 'layer' } | { kind: 'swap'; proto: object } | { kind: 'own'; saved: Patchable };
const LAYER: Interception = { kind: 'layer' };

/** The interceptor installed under each framework prototype (`layer`), or null where none can be. */
const layers = new WeakMap<object, object | null>();
/** The interceptor over each prototype a response is swapped from (`swap`). */
const swapPrototypes = new WeakMap<object, object>();

const hasOwnPatched = (target: object) => PATCHED.some((name) => Object.hasOwn(target, name));

/** The interceptor under `proto`, installed on first use; null when `proto` is Node's own or cannot take one. */
function layerUnder(proto: object): object | null {
  let layer = layers.get(proto);
  if (layer === undefined) {
    const below = Object.getPrototypeOf(proto) as object | null;
    const installable = proto !== ServerResponse.prototype && below !== null && Object.isExtensible(proto) && !hasOwnPatched(proto);
    layer = installable ? interceptor(below) : null;
    if (layer) Object.setPrototypeOf(proto, layer);
    layers.set(proto, layer);
  }
  // Someone set the prototype's own prototype since: intercept this response another way.
  return layer !== null && Object.getPrototypeOf(proto) === layer ? layer : null;
}

function swapPrototype(proto: object): object {
  let swapped = swapPrototypes.get(proto);
  if (!swapped) swapPrototypes.set(proto, (swapped = interceptor(proto)));
  return swapped;
}

/** Routes `res`'s methods to its recorder (registered in `RECORDERS` by the caller). */
function intercept(res: ServerResponse): Interception {
  const target = res as unknown as Patchable;
  const proto = Object.getPrototypeOf(res) as object;
  if (hasOwnPatched(res)) {
    const saved = { writeHead: target.writeHead, write: target.write, end: target.end, flushHeaders: target.flushHeaders };
    const methods = swapPrototype(proto) as Patchable;
    for (const name of PATCHED) target[name] = methods[name];
    return { kind: 'own', saved };
  }
  if (layerUnder(proto)) return LAYER;
  Object.setPrototypeOf(res, swapPrototype(proto));
  return { kind: 'swap', proto };
}

/** Ends the interception of `res`. */
function release(res: ServerResponse, interception: Interception): void {
  if (interception.kind === 'layer') RECORDERS.delete(res);
  else if (interception.kind === 'swap') {
    if (swapPrototypes.get(interception.proto) === Object.getPrototypeOf(res)) Object.setPrototypeOf(res, interception.proto);
  } else if (interception.kind === 'own') {
    const target = res as unknown as Patchable;
    for (const name of PATCHED) target[name] = interception.saved[name];
  }
}

/** A response finished while its recorder still recorded: its writes went around the interceptor (e.g. its prototype was set again). */
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
  private readonly interception: Interception;

  constructor(
    private readonly res: ServerResponse,
    private readonly maxBodyBytes: number,
    private readonly head: boolean,
  ) {
    RECORDERS.set(res, this);
    this.interception = intercept(res);
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

  /** Stops intercepting the response: its methods are its own again. */
  private restore(): void {
    const { res } = this;
    res.off('finish', onFinish);
    release(res, this.interception);
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
