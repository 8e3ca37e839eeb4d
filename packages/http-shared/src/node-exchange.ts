/**
 * The `HttpExchange` of a Node `req`/`res` pair, for every framework that runs on `node:http`: the request
 * view, the disconnect signal, reading the body, recording the handler's response on the raw
 * `ServerResponse`, replaying a shared response and answering an error there. An adapter subclasses it
 * with how its framework runs the downstream handler (`runHandler`) and overrides only what its framework
 * does differently (Fastify answers through its reply, Koa records its context).
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { pipeline, type Readable } from 'node:stream';
import { errorHeaders, PROBLEM_CONTENT_TYPE, problemBody, type FlightHttpError } from './errors.js';
import type { HttpExchange, HttpRequestView } from './exchange.js';
import { recordResponse, type OwnerRun } from './recorder.js';
import { eachSharedHeader } from './replay.js';
import { disconnectSignal, drainRefusedBody, nodeRequestInfo, readBody, type HttpRequestInfo } from './request.js';
import { sharedPayload, type SharedResponse } from './response.js';
import { teeResponse, type OwnerEventIds, type StreamedOwnerRun } from './stream-tee.js';

/** The Node request and the framework's view of its method, URL and headers. */
export interface NodeRequest {
  req: IncomingMessage;
  method: string;
  /** The URL as received (path and query), before any router rewrote it. */
  url: string;
  headers: IncomingHttpHeaders;
}

function requestInfoOf(source: NodeRequest): HttpRequestInfo {
  return nodeRequestInfo(source.req, source.method, source.url, source.headers);
}

/** What `purge` reads of a request on `node:http`. */
export function nodeRequestView<Req>(native: Req, source: NodeRequest): HttpRequestView<Req> {
  return { native, request: requestInfoOf(source) };
}

/** One request on `node:http`, as the shared handler sees it (a class: no closures per request). */
export abstract class NodeExchange<Req> implements HttpExchange<Req> {
  readonly request: HttpRequestInfo;
  protected readonly req: IncomingMessage;
  protected readonly res: ServerResponse;
  private signalOf: AbortSignal | undefined;

  constructor(
    readonly native: Req,
    source: NodeRequest,
    res: ServerResponse,
  ) {
    this.req = source.req;
    this.res = res;
    this.request = requestInfoOf(source);
  }

  /** Runs the downstream handler (it answers on `res`). */
  protected abstract runHandler(): Promise<void> | void;

  /** Where a body parser leaves the body, and where a body read by the middleware goes for the handler. */
  protected get bodyHolder(): { body?: unknown } {
    return this.req as IncomingMessage & { body?: unknown };
  }

  /** Made on first use only (the flight reads it on an L1 miss). */
  get signal(): AbortSignal {
    return (this.signalOf ??= disconnectSignal(this.res));
  }

  parsedBody(): unknown {
    return this.bodyHolder.body;
  }

  async readBody(limit: number): Promise<Buffer> {
    // A body parser may have consumed the stream without leaving a body.
    const body = this.req.readableEnded ? Buffer.alloc(0) : await readBody(this.req, limit);
    this.bodyHolder.body = body;
    return body;
  }

  setHeader(name: string, value: string): void {
    if (!this.res.headersSent) this.res.setHeader(name, value);
  }

  record(maxBodyBytes: number): OwnerRun {
    return recordResponse(this.res, { maxBodyBytes, head: this.request.method === 'HEAD' }, () => void this.runHandler());
  }

  recordStream(ids?: OwnerEventIds): StreamedOwnerRun {
    return teeResponse(this.res, () => this.runHandler(), ids);
  }

  /** Sends the head at once, then the body as it comes; a body that fails cuts the response short (the connection closes). */
  replayStream(head: SharedResponse, body: Readable): void {
    const { res } = this;
    res.statusCode = head.status;
    eachSharedHeader(head, (name, value) => res.setHeader(name, value));
    res.flushHeaders();
    pipeline(body, res, () => {});
  }

  passthrough(): Promise<void> | void {
    return this.runHandler();
  }

  replay(shared: SharedResponse): void {
    const { res } = this;
    res.statusCode = shared.status;
    eachSharedHeader(shared, (name, value) => res.setHeader(name, value));
    if (this.request.method === 'HEAD') {
      if (shared.length !== undefined) res.setHeader('content-length', shared.length);
      res.end();
    } else {
      res.end(sharedPayload(shared));
    }
  }

  reject(error: FlightHttpError): void {
    const { res } = this;
    if (res.headersSent) return void res.end();
    res.statusCode = error.status;
    res.setHeader('content-type', PROBLEM_CONTENT_TYPE);
    for (const [name, value] of errorHeaders(error)) res.setHeader(name, value);
    if (error.status === 413 && drainRefusedBody(this.req)) res.setHeader('connection', 'close');
    res.end(problemBody(error));
  }
}
