/**
 * Tees what a handler writes to a Node `ServerResponse` for a streamed flight: the owner's client gets
 * every write at once, as the handler makes it (nothing is held back), and the flight gets the response's
 * head (status and headers, as they stand when the handler first writes, flushes or ends) followed by
 * each body piece, as an async iterable that ends when the handler ends the response.
 */
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { PassThrough } from 'node:stream';
import { applyHeaders, toPiece, type OwnerRun, type Piece, type RecordResult } from './recorder.js';

/** The head of a streamed response, as the owner's client receives it (every header). */
export interface StreamedHead {
  status: number;
  headers: OutgoingHttpHeaders;
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

type Teed = 'writeHead' | 'write' | 'end' | 'flushHeaders';
type Methods = Record<Teed, (...args: unknown[]) => unknown>;
const TEED: readonly Teed[] = ['writeHead', 'write', 'end', 'flushHeaders'];

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

  constructor(private readonly res: ServerResponse) {
    const target = res as unknown as Methods;
    this.original = { writeHead: target.writeHead, write: target.write, end: target.end, flushHeaders: target.flushHeaders };
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
      this.take(chunk, encoding);
      return this.original.write.call(res, chunk, encoding, callback);
    };
    target.end = (chunk?: unknown, encoding?: unknown, callback?: unknown) => {
      this.take(typeof chunk === 'function' ? undefined : chunk, encoding);
      this.detach();
      return this.original.end.call(res, chunk, encoding, callback);
    };
  }

  get pieces(): AsyncIterable<StreamedHead | Piece> {
    return this.channel;
  }

  private takeHead(): void {
    if (this.headTaken) return;
    this.headTaken = true;
    if (this.teeing) this.channel.write({ status: this.res.statusCode, headers: this.res.getHeaders() } satisfies StreamedHead);
  }

  private take(chunk: unknown, encoding: unknown): void {
    this.takeHead();
    if (!this.teeing) return;
    const piece = toPiece(chunk, typeof encoding === 'function' ? undefined : encoding);
    if (piece.length > 0) this.channel.write(piece);
  }

  detach(): void {
    if (!this.teeing) return;
    this.teeing = false;
    const target = this.res as unknown as Methods;
    for (const name of TEED) target[name] = this.original[name];
    if (!this.channel.destroyed) this.channel.end();
    this.finished();
  }

  release(): void {}
}

/**
 * Starts teeing `res`, then calls `run` (which invokes the downstream handler). A handler that throws
 * synchronously ends the tee (nothing more is shared) and the error is thrown on.
 */
export function teeResponse(res: ServerResponse, run: () => Promise<void> | void): StreamedOwnerRun {
  const tee = new ResponseTee(res);
  try {
    tee.handled = run();
  } catch (error) {
    tee.detach();
    throw error;
  }
  return tee;
}
