/**
 * A coalesced request on a route with `stream: true`, as a streamed flight (`SingleFlight.executeStream`):
 * the owner's handler writes to its own client live (see stream-tee.ts) while its response's head — the
 * shared form of its status and headers, checked by the same sharing rules as a buffered response — and
 * then each body piece become the flight's chunks. Every other caller, on any node, gets the head and
 * then the pieces as the owner's handler writes them; a caller that joins late catches up from the first
 * piece; after completion the stored chunks replay. Errors before a caller's head was sent are thrown to
 * the handler, which answers them as for a buffered flight.
 */
import { Readable } from 'node:stream';
import type { FlightContext, FlightRole, FlightStreamRestart, StreamChunk, StreamJson } from '@flight/core';
import { UnshareableResponse } from './errors.js';
import type { HttpExchange, HttpFlightRole } from './exchange.js';
import type { ResolvedHttpFlightOptions } from './options.js';
import type { OwnerRun, Piece } from './recorder.js';
import { chunkOf, pieceOf } from './chunk-pieces.js';
import { ageOf, keepFor, staleFor } from './freshness.js';
import { isSharedResponse, toShared, unshareableReason, type SharedResponse } from './response.js';
import { eventPieces } from './resume/event-pieces.js';
import { isEventStream } from './resume/sse-events.js';
import { resumeRequestOf, type ResumeRequest } from './resume/resume-request.js';
import type { StreamedHead } from './stream-tee.js';

/** What a streamed flight needs of the handler's call for one request. */
export interface StreamedCall<Req> {
  readonly exchange: HttpExchange<Req>;
  /** The caller's signal (its client went away). */
  readonly signal: AbortSignal;
  /** The owner's run of the handler, once this call runs it. */
  run: OwnerRun | undefined;
  /** Set once this call's client is being answered. */
  answered: boolean;
  /** Set when the request resumes a stream after an event id (resumable routes). */
  resuming: boolean;
  /** Throws unless this call may run the handler for `context` (never twice, never once answered); marks its role. */
  claim(context: FlightContext): void;
  /** Tells this call's client its role. */
  tell(role: HttpFlightRole): void;
}

type StreamOptions = Pick<
  ResolvedHttpFlightOptions<unknown>,
  'singleFlight' | 'stage' | 'shareStatus' | 'vary' | 'maxBodyBytes' | 'replayHeaders' | 'resume'
>;

/**
 * The owner's chunks: its handler's head (refused when it may not be shared), then its body pieces (on a
 * resumable route, its whole events). A resumed request that runs the handler took over a dead owner's
 * run, or starts anew on a route that says to restart (core's `after` refuses any other start).
 */
async function* ownerChunks<Req>(
  call: StreamedCall<Req>,
  context: FlightContext,
  options: StreamOptions,
  resume: ResumeRequest | undefined,
): AsyncGenerator<StreamChunk> {
  const resuming = resume?.after !== undefined;
  call.claim(context);
  const { exchange } = call;
  const run = exchange.recordStream!(
    resume && { tag: resume.tag, epoch: context.run, restart: resuming && (context.takeover ? 'takeover' : 'expired') },
  );
  call.run = run;
  // The run was given up (lease lost, timeout): the owner's client gets the rest of the response directly.
  const stop = () => run.detach();
  context.signal.addEventListener('abort', stop, { once: true });
  let head = true;
  try {
    for await (const piece of run.pieces as AsyncIterable<StreamedHead | Piece>) {
      if (!head) {
        yield chunkOf(piece as Piece);
        continue;
      }
      head = false;
      const captured = { ...(piece as StreamedHead), body: '' };
      const refused = unshareableReason(captured, options);
      if (refused) throw refused;
      yield toShared(captured, options, exchange.request.method) as unknown as StreamJson;
    }
    // Detached before the handler wrote anything: there is no response to share.
    if (head) throw new UnshareableResponse('timeout', undefined);
  } finally {
    context.signal.removeEventListener('abort', stop);
    run.detach();
  }
}

/** The body pieces after the head; returning it (the client went away) detaches this caller from the flight. */
async function* bodyPieces(chunks: AsyncIterator<StreamChunk | FlightStreamRestart>): AsyncGenerator<Piece> {
  try {
    for (;;) {
      const next = await chunks.next();
      if (next.done) return;
      yield pieceOf(next.value as StreamChunk);
    }
  } finally {
    await chunks.return?.();
  }
}

/** How long the stored chunks of a run may be reused: by its head's freshness (freshness.ts). */
const keepChunksFor = (chunks: readonly StreamChunk[]) => keepFor(chunks[0]);

/**
 * Runs the streamed flight of one request and answers it: the owner's client is answered by its handler
 * (teed), any other caller with the shared head, then the body as it comes. Resolves once the caller's
 * answer has started (the owner's: once the flight settled), or, without answering, with how long to wait
 * (ms) when it met a stored response that may no longer be replayed (`staleFor`); rejects, before anything
 * was sent, with what the handler answers as for a buffered flight (an unshareable response, a timeout, a
 * coordination error).
 */
export async function streamFlight<Req>(call: StreamedCall<Req>, key: string, options: StreamOptions): Promise<number | undefined> {
  const resume = options.resume && resumeRequestOf(call.exchange.request, options.resume, options.stage, key);
  call.resuming = resume?.after !== undefined;
  const stream = options.singleFlight.executeStream(options.stage, key, (context) => ownerChunks(call, context, options, resume), {
    signal: call.signal,
    keepFailures: false,
    maxBytes: options.maxBodyBytes,
    resultTtlMs: keepChunksFor,
    // A resumable stream announces a replaced run (restart event); any other caller is cut short.
    onRestart: resume ? 'restart' : 'error',
    // A resume never starts the flight unless the route says to restart; it keeps every chunk from the
    // head on (the events it already has are skipped by `eventPieces`, which also tells a replaced run).
    ...(resume?.after && resume.expired === 'gone' ? { after: { epoch: resume.after.epoch, index: 0 } } : {}),
  });
  let settledRole: FlightRole | undefined;
  const outcome = stream.result();
  // A caller served from a stored result knows it by its first chunk; one that joined the run does not yet.
  outcome.then(
    (result) => (settledRole = result.role),
    () => {},
  );
  const chunks = stream[Symbol.asyncIterator]();
  let first: IteratorResult<StreamChunk | FlightStreamRestart>;
  try {
    first = await chunks.next();
  } catch (error) {
    await chunks.return?.();
    throw error;
  }
  if (call.run) {
    await chunks.return?.();
    await outcome;
    return undefined;
  }
  if (first.done || !isSharedResponse(first.value)) {
    await chunks.return?.();
    throw new TypeError('the shared value is not a streamed HTTP response');
  }
  const head = first.value as SharedResponse;
  const stored = settledRole === 'replay' || settledRole === 'l1';
  // A resumed request continues the response it was receiving, whatever its freshness says now.
  if (stored && !resume?.after) {
    const stale = staleFor(head);
    if (stale) {
      await chunks.return?.();
      return stale;
    }
    const age = ageOf(head);
    if (age !== undefined) call.exchange.setHeader('age', String(age));
  }
  call.answered = true;
  call.tell(stored ? settledRole! : 'follower');
  const sse = resume && isEventStream(head.headers.find(([name]) => name === 'content-type')?.[1]);
  const body = sse ? eventPieces({ chunks, epoch: () => stream.epoch ?? 0 }, resume.tag, resume.after) : bodyPieces(chunks);
  call.exchange.replayStream!(head, Readable.from(body));
  return undefined;
}
