/**
 * `@flight/koa`: middleware that coalesces identical concurrent requests across a cluster with
 * distributed single-flight. A thin binding of Koa 2/3 over the shared HTTP handler.
 */
import { Readable } from 'node:stream';
import type { Context, Middleware, Next } from 'koa';
import {
  createHttpFlightHandler,
  drainRefusedBody,
  errorHeaders,
  errorStatus,
  groupedHeaders,
  NodeExchange,
  nodeRequestView,
  problemBody,
  PROBLEM_CONTENT_TYPE,
  sharedBody,
  type FlightHttpError,
  type HttpFlightOptions,
  type NodeRequest,
  type OwnerEventIds,
  type OwnerRun,
  type RecordResult,
  type SharedResponse,
  type StreamedOwnerRun,
} from '@flight/http-shared';

export * from '@flight/http-shared/public';

/** Options of the Koa middleware; `key` receives the Koa context. */
export type KoaFlightOptions = HttpFlightOptions<Context>;

/** Reads a stream up to `limit` bytes. Past it, returns a stream replaying what was read, then the rest. */
async function collect(stream: Readable, limit: number): Promise<{ bytes: Buffer } | { rest: Readable }> {
  const chunks: Buffer[] = [];
  let size = 0;
  const iterator = stream[Symbol.asyncIterator]();
  for (;;) {
    const next = await iterator.next();
    if (next.done) return { bytes: Buffer.concat(chunks, size) };
    const chunk: Buffer = typeof next.value === 'string' ? Buffer.from(next.value) : Buffer.from(next.value as Uint8Array);
    chunks.push(chunk);
    size += chunk.length;
    if (size > limit) {
      async function* rest() {
        yield* chunks;
        for (;;) {
          const item = await iterator.next();
          if (item.done) return;
          yield item.value as Buffer;
        }
      }
      return { rest: Readable.from(rest(), { objectMode: false }) };
    }
  }
}

const EMPTY_STATUSES = new Set([204, 205, 304]);

function isWebStream(body: unknown): body is ReadableStream<Uint8Array> {
  return typeof ReadableStream !== 'undefined' && body instanceof ReadableStream;
}

/** Runs the downstream middleware and records the response it left on the context. */
function recordKoa(ctx: Context, next: Next, maxBodyBytes: number): OwnerRun {
  let replacement: { body: unknown } | undefined;
  let thrown: { error: unknown } | undefined;
  const head = ctx.method === 'HEAD';
  const result = (async (): Promise<RecordResult> => {
    try {
      await next();
    } catch (error) {
      thrown = { error };
      return { kind: 'error', error, status: errorStatus(error) };
    }
    if (ctx.respond === false) return { kind: 'unrecordable' };
    const status = ctx.status;
    let body: unknown = ctx.body;
    let bytes: Buffer;
    const headers = { ...ctx.response.headers };
    if (head || EMPTY_STATUSES.has(status)) bytes = Buffer.alloc(0);
    else if (body === null || body === undefined) {
      // What Koa's respond() sends for a missing body.
      if ((ctx.response as { _explicitNullBody?: boolean })._explicitNullBody) {
        bytes = Buffer.alloc(0);
        delete headers['content-type'];
      } else {
        bytes = Buffer.from(ctx.req.httpVersionMajor >= 2 ? String(status) : ctx.message || String(status), 'utf8');
        headers['content-type'] = 'text/plain; charset=utf-8';
      }
    } else if (typeof body === 'string') bytes = Buffer.from(body, 'utf8');
    else if (Buffer.isBuffer(body)) bytes = body;
    else if (body instanceof Uint8Array) bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    else if (body instanceof Readable || isWebStream(body)) {
      if (isWebStream(body)) body = Readable.fromWeb(body as never);
      const collected = await collect(body as Readable, maxBodyBytes);
      if ('rest' in collected) {
        replacement = { body: collected.rest };
        return { kind: 'overflow' };
      }
      bytes = collected.bytes;
      replacement = { body: bytes };
    } else if (typeof Blob !== 'undefined' && body instanceof Blob) {
      if (body.size > maxBodyBytes) return { kind: 'overflow' };
      bytes = Buffer.from(await body.arrayBuffer());
      replacement = { body: bytes };
    } else if (typeof Response !== 'undefined' && body instanceof Response) {
      return { kind: 'unrecordable' };
    } else {
      bytes = Buffer.from(JSON.stringify(body), 'utf8');
    }
    if (bytes.length > maxBodyBytes) return { kind: 'overflow' };
    return { kind: 'complete', response: { status, headers, body: bytes } };
  })();
  return {
    result,
    async release() {
      // Koa sends the response when the middleware returns: wait for the handler (it may still be running
      // when the flight gave up on it), or Koa would answer 404 and the handler write after the fact.
      await result;
      if (thrown) throw thrown.error;
      if (replacement) ctx.body = replacement.body as never;
    },
  };
}

/** A Koa request on `node:http` (`originalUrl`: the URL before a router stripped its prefix). */
function sourceOf(ctx: Context): NodeRequest {
  return { req: ctx.req, method: ctx.method, url: ctx.originalUrl ?? ctx.url, headers: ctx.req.headers };
}

/**
 * One Koa request: the Node exchange, except that Koa sends the response it finds on the context when the
 * middleware returns — so the response is recorded, replayed and answered on the context, and the
 * middleware returns as soon as an owner's response is set (`ownerReleased`).
 */
class KoaExchange extends NodeExchange<Context> {
  constructor(
    ctx: Context,
    private readonly next: Next,
    readonly ownerReleased: () => void,
    private readonly ownerFailed: (error: unknown) => void,
  ) {
    super(ctx, sourceOf(ctx), ctx.res);
  }

  /** Body parsers leave the body on `ctx.request`. */
  protected override get bodyHolder(): { body?: unknown; rawBody?: unknown } {
    return this.native.request as { body?: unknown; rawBody?: unknown };
  }

  override async readBody(limit: number): Promise<Buffer> {
    const body = await super.readBody(limit);
    (this.bodyHolder as { rawBody?: unknown }).rawBody = body;
    return body;
  }

  override setHeader(name: string, value: string): void {
    this.native.set(name, value);
  }

  protected runHandler(): Promise<void> {
    return this.next();
  }

  override record(maxBodyBytes: number): OwnerRun {
    return recordKoa(this.native, this.next, maxBodyBytes);
  }

  /**
   * A streamed owner's middleware returns once the downstream middleware did (Koa then sends the body it
   * left, through the tee), or rejects with its error (Koa answers it, through the tee).
   */
  override recordStream(ids?: OwnerEventIds): StreamedOwnerRun {
    const run = super.recordStream(ids);
    Promise.resolve(run.handled).then(this.ownerReleased, this.ownerFailed);
    return run;
  }

  /** The shared head on the context and `body` as its body: Koa sends it when the middleware returns. */
  override replayStream(head: SharedResponse, body: Readable): void {
    const ctx = this.native;
    ctx.status = head.status;
    for (const [name, value] of groupedHeaders(head)) ctx.set(name, value);
    // Headers already sent: a body that fails can only cut the response short.
    body.once('error', () => ctx.res.destroy());
    ctx.body = body;
    if (!head.headers.some(([name]) => name === 'content-type')) ctx.remove('Content-Type');
  }

  override replay(shared: SharedResponse): void {
    const ctx = this.native;
    ctx.status = shared.status;
    for (const [name, value] of groupedHeaders(shared)) ctx.set(name, value);
    if (this.request.method === 'HEAD') {
      ctx.body = Buffer.alloc(0);
      if (shared.length !== undefined) ctx.length = shared.length;
      else ctx.remove('Content-Length');
    } else {
      ctx.body = sharedBody(shared);
    }
    // Koa adds a Content-Type to bodies without one; replay exactly the shared headers.
    if (!shared.headers.some(([name]) => name === 'content-type')) ctx.remove('Content-Type');
  }

  override reject(error: FlightHttpError): void {
    const ctx = this.native;
    ctx.status = error.status;
    for (const [name, value] of errorHeaders(error)) ctx.set(name, value);
    ctx.body = problemBody(error);
    ctx.type = PROBLEM_CONTENT_TYPE;
    if (error.status === 413 && drainRefusedBody(ctx.req)) ctx.set('connection', 'close');
  }
}

/**
 * Middleware: identical concurrent requests (same stage and key) run the downstream middleware
 * once across the cluster; the others receive the same response. Use it on a route:
 *
 * ```ts
 * router.get('/report', createFlightMiddleware({ singleFlight, stage: 'report' }), handler);
 * ```
 * `middleware.purge(ctx)` drops the flight of a request to the same URL (see `KoaFlightMiddleware`).
 * Throws `FlightValidationError` on invalid options.
 */
export function createFlightMiddleware(options: KoaFlightOptions): KoaFlightMiddleware {
  const handle = createHttpFlightHandler<Context>(options);
  const flightMiddleware = function flightMiddleware(ctx: Context, next: Next): Promise<void> {
    // Returns as soon as an owner's response is set (Koa sends it then), or when the request is handled.
    return new Promise<void>((resolve, reject) => {
      handle(new KoaExchange(ctx, next, resolve, reject)).then(resolve, reject);
    });
  };
  return Object.assign(flightMiddleware, { purge: (ctx: Context) => handle.purge(nodeRequestView(ctx, sourceOf(ctx))) });
}

/** The Koa middleware, with the purge of its flights. */
export interface KoaFlightMiddleware extends Middleware {
  /**
   * Forgets, cluster-wide, the flights a request to the same URL as `ctx` would be coalesced under (GET
   * and HEAD by default, whatever `ctx`'s own method, e.g. `PURGE`), with the same key, identity and
   * `vary` headers: the next such request runs the handler again. Resolves `true` when a flight was found.
   */
  purge(ctx: Context): Promise<boolean>;
}
