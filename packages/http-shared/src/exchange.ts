/**
 * What an adapter gives the shared handler for one request (`HttpExchange`: a normalized request and the
 * verbs the handler answers with), what `purge` reads of a request, and the role a response is told with.
 */
import type { Readable } from 'node:stream';
import type { FlightRole } from '@flight/core';
import type { FlightHttpError } from './errors.js';
import type { OwnerRun } from './recorder.js';
import type { HttpRequestInfo } from './request.js';
import type { SharedResponse } from './response.js';
import type { OwnerEventIds, StreamedOwnerRun } from './stream-tee.js';

/** How the response was obtained, as told by the role header. `bypass`: not coalesced, the handler ran. */
export type HttpFlightRole = FlightRole | 'bypass';

/** One request, as an adapter presents it to the handler. */
export interface HttpExchange<Req> {
  /** The framework's request (or context), handed to the `key` function. */
  readonly native: Req;
  readonly request: HttpRequestInfo;
  /** Fires when the client goes away before its response was sent. */
  readonly signal: AbortSignal;
  /** The body a body parser already produced, or `undefined`. */
  parsedBody(): unknown;
  /** Reads the raw body (refusing past `limit` with `FlightBodyTooLargeError`) and leaves it for the handler. */
  readBody(limit: number): Promise<Buffer>;
  setHeader(name: string, value: string): void;
  /** Runs the downstream handler, recording its response without sending it. */
  record(maxBodyBytes: number): OwnerRun;
  /** Runs the downstream handler normally. */
  passthrough(): Promise<void> | void;
  /** Answers with a shared response. */
  replay(response: SharedResponse): void;
  /** Answers with an error of the middleware (problem+json). */
  reject(error: FlightHttpError): void;
  /**
   * Optional: called once an owner's response has been handed to its client (`OwnerRun.release()` settled),
   * while the flight's bookkeeping (storing the result, waking followers) may still run. An adapter whose
   * framework sends the response when the middleware returns (Koa) returns from the middleware then.
   */
  ownerReleased?(): void;
  /**
   * Optional (routes with `stream: true`): runs the downstream handler, its writes going to the client live
   * and teed to the flight; with `ids` (resumable routes), Server-Sent Events are cut into events with ids.
   */
  recordStream?(ids?: OwnerEventIds): StreamedOwnerRun;
  /** Optional (routes with `stream: true`): answers with a shared head, then `body` as it comes. */
  replayStream?(head: SharedResponse, body: Readable): void;
}

/** What `purge` reads of a request: the framework's request and its normalized view. */
export type HttpRequestView<Req> = Pick<HttpExchange<Req>, 'native' | 'request'>;
