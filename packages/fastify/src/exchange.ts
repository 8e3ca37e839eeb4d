/**
 * One Fastify request as the shared HTTP handler sees it. The owner's response is recorded where Fastify
 * writes it (the raw `ServerResponse`, after serialization and `onSend` hooks), so what is shared is byte
 * for byte what the owner's client gets; replays and errors go through `reply.send`, so the route's
 * `onSend` and `onResponse` hooks run for every caller.
 */
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  drainRefusedBody,
  eachSharedHeader,
  errorHeaders,
  NodeExchange,
  nodeRequestView,
  problemBody,
  PROBLEM_CONTENT_TYPE,
  sharedPayload,
  type FlightHttpError,
  type HttpRequestView,
  type NodeRequest,
  type SharedResponse,
} from '@flight/http-shared';

/** A Fastify route handler (bound to its instance by Fastify). */
export type RouteHandler = (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) => unknown;

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value !== null && typeof value === 'object' && typeof (value as { then?: unknown }).then === 'function';
}

export class FastifyExchange extends NodeExchange<FastifyRequest> {
  constructor(
    private readonly instance: FastifyInstance,
    private readonly handler: RouteHandler,
    native: FastifyRequest,
    private readonly reply: FastifyReply,
  ) {
    super(native, sourceOf(native), reply.raw);
  }

  /** Fastify parses the body before the handler: what its content-type parser produced. */
  protected override get bodyHolder(): { body?: unknown } {
    return this.native as { body?: unknown };
  }

  override setHeader(name: string, value: string): void {
    if (!this.res.headersSent) void this.reply.header(name, value);
  }

  protected runHandler(): Promise<void> | void {
    return this.invoke();
  }

  /**
   * Runs the route's handler as Fastify would: a returned value (or a promise of one) is sent, a thrown
   * error goes to the error handler, and an async handler that resolves without sending (`reply.code(204)`
   * and nothing else) gets an empty response. Returns once the handler returned (or its promise settled).
   */
  private invoke(): Promise<void> | void {
    const { reply } = this;
    // Whether the handler sent: `reply.sent` cannot tell while the response is being recorded.
    let sent = false;
    const send = reply.send;
    reply.send = function (this: FastifyReply, payload?: unknown) {
      sent = true;
      return send.call(this, payload);
    };
    let result: unknown;
    try {
      result = this.handler.call(this.instance, this.native, reply);
    } catch (error) {
      return this.send(error);
    }
    if (isThenable(result)) {
      return Promise.resolve(result).then(
        (payload) => {
          if (payload === reply) return;
          if (payload !== undefined) this.send(payload);
          else if (!sent && !reply.sent && !this.native.raw.destroyed) this.send(undefined);
        },
        (error: unknown) => this.send(error),
      );
    }
    if (result !== undefined && result !== reply) this.send(result);
  }

  /** `reply.send`, never throwing: a payload Fastify cannot send (it throws) is answered as that error. */
  private send(payload: unknown): void {
    const { reply } = this;
    try {
      void reply.send(payload);
    } catch (error) {
      try {
        void reply.send(error);
      } catch (fatal) {
        reply.log.error({ err: fatal }, '@flight/fastify: the response could not be sent');
        reply.raw.destroy();
      }
    }
  }

  override replay(shared: SharedResponse): void {
    const { reply } = this;
    void reply.code(shared.status);
    eachSharedHeader(shared, (name, value) => void reply.header(name, value));
    if (this.request.method === 'HEAD') {
      if (shared.length !== undefined) void reply.header('content-length', shared.length);
      // A stream: Fastify's HEAD handling keeps the declared length for it.
      void reply.send(Readable.from([]));
      return;
    }
    const payload = sharedPayload(shared);
    if (payload.length === 0) void reply.send();
    else if (shared.headers.some(([name]) => name === 'content-type')) void reply.send(payload);
    // Fastify gives a string or Buffer body without a Content-Type one; a stream keeps the shared headers exact.
    else void reply.header('content-length', Buffer.byteLength(payload)).send(Readable.from([payload]));
  }

  /** The shared head, then `body` through `reply.send` (a stream that fails after the head cuts the response short). */
  override replayStream(head: SharedResponse, body: Readable): void {
    const { reply } = this;
    void reply.code(head.status);
    eachSharedHeader(head, (name, value) => void reply.header(name, value));
    void reply.send(body);
  }

  override reject(error: FlightHttpError): void {
    const { reply } = this;
    if (reply.raw.headersSent) return void reply.raw.end();
    void reply.code(error.status).header('content-type', PROBLEM_CONTENT_TYPE);
    for (const [name, value] of errorHeaders(error)) void reply.header(name, value);
    if (error.status === 413 && drainRefusedBody(reply.request.raw)) void reply.header('connection', 'close');
    void reply.send(problemBody(error));
  }
}

/** A Fastify request on `node:http`. */
function sourceOf(req: FastifyRequest): NodeRequest {
  return { req: req.raw, method: req.method, url: req.url, headers: req.headers };
}

/** What `purge` reads of a Fastify request. */
export function fastifyRequestView(req: FastifyRequest): HttpRequestView<FastifyRequest> {
  return nodeRequestView(req, sourceOf(req));
}
