/**
 * Tees what a handler writes to a Node `ServerResponse` for a streamed flight: the owner's client gets
 * every write at once, as the handler makes it (nothing is held back), and the flight gets the response's
 * head (status and headers, as they stand when the handler first writes, flushes or ends) followed by
 * each body piece, as an async iterable that ends when the handler ends the response.
 *
 * The owner's client going away must not stop the response for the flight's other callers. A handler that
 * writes to the response itself goes on writing (a write to a closed response is harmless). A body piped
 * into the response (`stream.pipe(res)`; Koa and Fastify send a stream body so) would stop: the pipe ends
 * when its destination closes and Koa and Fastify then destroy the body. So the tee keeps reading such a
 * body to its end — through the tee, into the closed response — and refuses to let it be destroyed meanwhile.
 * Only while the flight needs it: once the tee detaches (the run ended or was given up: lease lost, past
 * maxRunMs, cancelled, its single-flight closed) or the server closes, a body read for the flight alone is
 * destroyed, so an endless source is never read for nobody.
 */
import type { EventEmitter } from 'node:events';
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { PassThrough, type Readable } from 'node:stream';
import { applyHeaders, toPiece, type OwnerRun, type Piece, type RecordResult } from './recorder.js';
import { formatEventId } from './resume/event-id.js';
import { isEventStream, restartEvent, SseEventSplitter, withEventId } from './resume/sse-events.js';

/** The head of a streamed response, as the owner's client receives it (every header). */
export interface StreamedHead {
  status: number;
  headers: OutgoingHttpHeaders;
}

/**
 * A resumable route's event ids, for the owner's run: with a `text/event-stream` response the tee cuts the
 * handler's writes into whole events, gives each to the flight as one chunk and to the owner's client with
 * its id (the client gets an event once it is complete: a write that ends mid-event waits for the rest).
 */
export interface OwnerEventIds {
  tag: string;
  epoch: number;
  /**
   * The owner's client resumes a stream whose run is replaced by this one (`takeover`: its owner died) or
   * was gone (`expired`): it first gets a `flight-restart` event saying so. False for a fresh request.
   */
  restart: false | 'takeover' | 'expired';
}

/** The owner's events in progress: how the writes are cut, and the position of the next one. */
interface EventCutting {
  ids: OwnerEventIds;
  splitter: SseEventSplitter;
  next: number;
  prefix: string;
}

/** A handler run whose response is teed: an `OwnerRun` whose release is a no-op (its client is answered live). */
export interface StreamedOwnerRun extends OwnerRun {
  /** The head, then every non-empty body piece, until the handler ends the response or the tee detaches. */
  readonly pieces: AsyncIterable<StreamedHead | Piece>;
  /** What the downstream handler returned (Koa: the promise of its middleware). */
  readonly handled: Promise<void> | void;
  /** Stops teeing: the handler's writes go on to its client only. */
  detach(): void;
}

type Teed = 'writeHead' | 'write' | 'end' | 'flushHeaders' | 'destroy';
type Methods = Record<Teed, (...args: unknown[]) => unknown>;
const TEED: readonly Teed[] = ['writeHead', 'write', 'end', 'flushHeaders', 'destroy'];

/** Settled once the response ended (or the tee detached): the run's outcome is streamed, never recorded. */
const STREAMED: RecordResult = { kind: 'unrecordable' };

class ResponseTee implements StreamedOwnerRun {
  readonly outcome: RecordResult | undefined = undefined;
  readonly result: Promise<RecordResult>;
  handled: Promise<void> | void = undefined;
  private readonly channel = new PassThrough({ objectMode: true });
  private readonly original: Methods;
  private headTaken = false;
  private teeing = true;
  private finished!: () => void;
  /** The body piped into the response, if any. */
  private source: Readable | undefined;
  private forwarding = false;
  /** The server the response belongs to: its closing ends the tee. */
  private readonly server: EventEmitter | undefined;
  /** Set at the head when the route's event ids apply (a `text/event-stream` response). */
  private events: EventCutting | undefined;

  constructor(
    private readonly res: ServerResponse,
    private readonly ids: OwnerEventIds | undefined,
  ) {
    const target = res as unknown as Methods;
    this.original = {
      writeHead: target.writeHead,
      write: target.write,
      end: target.end,
      flushHeaders: target.flushHeaders,
      destroy: target.destroy,
    };
    this.result = new Promise<RecordResult>((resolve) => (this.finished = () => resolve(STREAMED)));
    target.writeHead = (status: unknown, reason?: unknown, headers?: unknown) => {
      if (this.headTaken) return this.original.writeHead.call(res, status, reason, headers);
      res.statusCode = status as number;
      if (typeof reason === 'string') res.statusMessage = reason;
      else headers = reason;
      applyHeaders(res, headers);
      this.takeHead();
      return this.original.writeHead.call(res, res.statusCode, res.statusMessage);
    };
    target.flushHeaders = () => {
      this.takeHead();
      return this.original.flushHeaders.call(res);
    };
    target.write = (chunk: unknown, encoding?: unknown, callback?: unknown) => {
      const stamped = this.take(chunk, encoding);
      if (stamped === undefined) return this.original.write.call(res, chunk, encoding, callback);
      return this.original.write.call(res, stamped, 'utf8', typeof encoding === 'function' ? encoding : callback);
    };
    target.end = (chunk?: unknown, encoding?: unknown, callback?: unknown) => {
      const data = typeof chunk === 'function' ? undefined : chunk;
      const stamped = this.take(data, typeof encoding === 'function' ? undefined : encoding);
      if (stamped === undefined) {
        this.detach();
        return this.original.end.call(res, chunk, encoding, callback);
      }
      const rest = stamped + this.cutLast();
      this.detach();
      const done = [chunk, encoding, callback].find((arg) => typeof arg === 'function');
      return this.original.end.call(res, rest, 'utf8', done);
    };
    target.destroy = (error?: unknown) => {
      // The server side gives up on a response its client still reads (a handler or its body failed);
      // destroying a response whose client is gone is only cleanup.
      if (!res.destroyed) this.fail(error instanceof Error ? error : new Error('the response was destroyed before it ended'));
      return this.original.destroy.call(res, error);
    };
    res.on('pipe', this.onPipe);
    res.once('close', this.onClose);
    this.server = (res.socket as { server?: EventEmitter } | null)?.server;
    this.server?.once('close', this.onServerClose);
  }

  private readonly onServerClose = (): void => this.detach();

  private readonly onPipe = (source: Readable): void => {
    this.source = source;
    source.once('error', (error: Error) => this.fail(error));
    const destroy = source.destroy;
    source.destroy = (error?: Error) => {
      // The client went away (the framework cleans up, `pipeline` with a premature close): the body goes on for the flight.
      const cleanup = !error || (error as { code?: unknown }).code === 'ERR_STREAM_PREMATURE_CLOSE';
      if (cleanup && this.teeing && this.res.destroyed && !source.readableEnded) {
        this.keepReading(source);
        return source;
      }
      source.destroy = destroy;
      return destroy.call(source, error);
    };
  };

  private readonly onClose = (): void => {
    const { source } = this;
    if (!this.teeing || !source || source.readableEnded) return;
    if (source.destroyed) this.fail(source.errored ?? new Error('the response body was destroyed before it ended'));
    else this.keepReading(source);
  };

  /** Reads the piped body to its end into the (closed) response, through the tee. */
  private keepReading(source: Readable): void {
    if (this.forwarding) return;
    this.forwarding = true;
    const { res } = this;
    source.unpipe(res);
    source.on('data', (piece: unknown) => void res.write(piece));
    source.once('end', () => res.end());
    source.resume();
  }

  /** The response failed before it ended: nothing more is shared, and the flight's stream fails with `error`. */
  private fail(error: Error): void {
    if (!this.teeing) return;
    this.channel.destroy(error);
    this.detach();
  }

  get pieces(): AsyncIterable<StreamedHead | Piece> {
    return this.channel;
  }

  private takeHead(): void {
    if (this.headTaken) return;
    this.headTaken = true;
    const { ids } = this;
    if (ids && isEventStream(this.res.getHeader('content-type'))) {
      const prefix = ids.restart ? restartEvent(formatEventId({ tag: ids.tag, epoch: ids.epoch, index: 0 }), ids.restart) : '';
      this.events = { ids, splitter: new SseEventSplitter(), next: 1, prefix };
    }
    if (this.teeing) this.channel.write({ status: this.res.statusCode, headers: this.res.getHeaders() } satisfies StreamedHead);
  }

  /**
   * Takes a write for the flight. Returns what the owner's client gets instead of the write (its events
   * with their ids) when the route's event ids apply, else undefined (the write as it is).
   */
  private take(chunk: unknown, encoding: unknown): string | undefined {
    this.takeHead();
    if (!this.teeing) return undefined;
    const piece = toPiece(chunk, typeof encoding === 'function' ? undefined : encoding);
    if (!this.events) {
      if (piece.length > 0) this.channel.write(piece);
      return undefined;
    }
    return this.stamp(this.events.splitter.push(piece));
  }

  /** Gives whole events to the flight, and returns them with their ids for the owner's client. */
  private stamp(events: string[]): string {
    const cutting = this.events!;
    let out = cutting.prefix;
    cutting.prefix = '';
    for (const event of events) {
      this.channel.write(event);
      out += withEventId(event, formatEventId({ tag: cutting.ids.tag, epoch: cutting.ids.epoch, index: cutting.next++ }));
    }
    return out;
  }

  /** The handler ended its response: what is left after the last blank line is its last event. */
  private cutLast(): string {
    return this.events ? this.stamp(this.events.splitter.end()) : '';
  }

  detach(): void {
    if (!this.teeing) return;
    this.teeing = false;
    const target = this.res as unknown as Methods;
    for (const name of TEED) target[name] = this.original[name];
    // Given up mid-event: the owner's client gets the part it was waiting for; the rest comes as written.
    const held = this.events?.splitter.end().join('') ?? '';
    if (held.length > 0 && !this.res.writableEnded) this.res.write(held);
    this.res.off('pipe', this.onPipe);
    this.res.off('close', this.onClose);
    this.server?.off('close', this.onServerClose);
    // A body read only for the flight (its client is gone) is needed by nobody now.
    const { source } = this;
    if (this.forwarding && source && !source.readableEnded && !source.destroyed) source.destroy();
    if (!this.channel.destroyed) this.channel.end();
    this.finished();
  }

  release(): void {}
}

/**
 * Starts teeing `res`, then calls `run` (which invokes the downstream handler). A handler that throws
 * synchronously ends the tee (nothing more is shared) and the error is thrown on.
 */
export function teeResponse(res: ServerResponse, run: () => Promise<void> | void, ids?: OwnerEventIds): StreamedOwnerRun {
  const tee = new ResponseTee(res, ids);
  try {
    tee.handled = run();
  } catch (error) {
    tee.detach();
    throw error;
  }
  return tee;
}
