/** What callers of `SingleFlight.executeStream` see. */
import type { ExecuteOptions, FlightResult } from '../flight/types.js';

/** A JSON value (what `JSON.stringify` keeps as is). */
export type StreamJson = null | boolean | number | string | StreamJson[] | { [field: string]: StreamJson };

/** One chunk of a streamed flight: text, bytes or a JSON value. */
export type StreamChunk = string | Uint8Array | StreamJson;

/** What a caller does when the run it already received chunks of is replaced by a new run (a takeover). */
export type StreamRestartMode = 'error' | 'restart';

/** Where a caller stopped reading a streamed flight: the run (its epoch, or its node-local run id) and how many chunks it received. */
export interface StreamPosition {
  /** The run it read (`FlightStream.epoch`: the run's epoch, or the node-local id of a run without a lease). */
  epoch: number | undefined;
  /** How many chunks of that run it received: it continues with chunk `index`. */
  index: number;
}

export interface ExecuteStreamOptions extends Pick<ExecuteOptions, 'signal' | 'sessionId' | 'keepFailures' | 'cancelWhenAbandoned'> {
  /**
   * A caller that already received chunks of a run that is then replaced by a new owner's run:
   * `'error'` ends its iteration with `FlightStreamInterruptedError`; `'restart'` yields a
   * `FlightStreamRestart` marker, then the new run's chunks from its first one. A caller that received
   * no chunk simply follows the new run either way.
   * @default 'error'
   */
  onRestart?: StreamRestartMode;
  /**
   * Resume: this caller already received `index` chunks of the run `epoch` (a reconnecting client, on any
   * node). It gets the chunks from `index` on, live or from the stored ones; when that run was replaced
   * since, it is treated as `onRestart` says for a caller that received chunks. It never runs the
   * supplier: with no run in progress and none kept it fails with `FlightStreamExpiredError` (so does a
   * caller that joins the flight at that very moment).
   */
  after?: StreamPosition;
  /** Owner side: a run may stream at most this many chunks (`FlightStreamLimitError` past it). @default 10000 */
  maxChunks?: number;
  /**
   * Owner side: a run may stream at most this many bytes of encoded chunks (`FlightStreamLimitError`
   * past it). @default the stage's `maxResultBytes`
   */
  maxBytes?: number;
  /**
   * Owner side: chunks produced within this many milliseconds are appended to the coordinator in one write;
   * with 0 a chunk goes out at once when no append is in flight (chunks produced while an append is in
   * flight always go together in the next one). @default 0
   */
  batchMs?: number;
  /**
   * How long later callers may reuse the run's chunks once it completed, when less than the stage's
   * `resultTtlMs`: milliseconds, or a function of the chunks saying how long, from now (see
   * `ExecuteOptions.resultTtlMs`). Callers that joined the run get every chunk whatever this says.
   * @default the stage's `resultTtlMs`
   */
  resultTtlMs?: number | ((chunks: readonly StreamChunk[]) => number | undefined);
}

/** The chunks a streamed flight produced, live, and its outcome. */
export interface FlightStream<C> extends AsyncIterable<C> {
  /**
   * The run whose chunks this caller's iteration is giving, once it gave one (it changes at a
   * `FlightStreamRestart`): its fencing epoch, or for a run without a lease (local mode, hybrid fallback)
   * the node-local run id (`FlightContext.run`); undefined before.
   */
  readonly epoch: number | undefined;
  /**
   * All chunks once the flight completed, with how they were obtained (`role`, `shared`, `epoch` as
   * `execute` reports them). Starts the flight when nothing iterated it yet.
   */
  result(): Promise<FlightResult<C[]>>;
}
