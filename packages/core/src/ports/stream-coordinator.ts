/**
 * The optional streaming extension of the `FlightCoordinator` port: the log of a flight's output,
 * one stream per run (epoch), written by the run's fenced owner and read by every follower.
 * `SingleFlight.executeStream` needs it in `distributed` and `hybrid` modes (see `supportsStreams`).
 */
import type { Fence, FlightMeta, FlightRef } from '../state/types.js';
import type { FlightCoordinator } from './coordinator.js';

/** One chunk of a run's stream, as stored: `id` orders the entries of one run (opaque, compare by reading). */
export interface StreamEntry {
  id: string;
  /** The encoded chunk (see `stream/chunk-codec.ts`). */
  chunk: string;
}

export interface StreamAppendInput {
  /** Encoded chunks, appended in order. */
  chunks: readonly string[];
  /** TTL of the run's stream, renewed by every append. */
  ttlMs: number;
  /** The append is refused (`LIMIT`, nothing written) when the stream would hold more entries than this. */
  maxChunks: number;
  /** … or more bytes (UTF-8) of chunks than this. */
  maxBytes: number;
  /**
   * How many entries the run's stream holds before these (the index of the first). An append whose stream
   * holds another number writes nothing and answers `POSITION`: a client that sends a command again after a
   * reconnect (ioredis does) cannot append the same chunks twice. Omitted: appended wherever the stream ends.
   */
  from?: number;
}

/**
 * `FENCED`: the writer no longer owns an active run of the flight. `FORGOTTEN`: its run was forgotten
 * (nothing of it is shared any more). `LIMIT`: the caps would be passed; nothing was written. `POSITION`:
 * the stream does not hold `from` entries (these were appended already, or entries were lost); nothing was
 * written.
 */
export type StreamAppendReply = { ok: true } | { ok: false; code: 'FENCED' | 'FORGOTTEN' | 'LIMIT' | 'POSITION' };

export interface StreamReadInput {
  /** The run whose stream is read. */
  epoch: number;
  /** Entries after this id; `''` from the first one. */
  afterId: string;
  /** At most this many entries. */
  count: number;
}

export interface StreamReadReply {
  /** Entries of the run after `afterId`, oldest first. */
  entries: StreamEntry[];
  /** The flight's live metadata when read (null without a live record): tells a reader of a replaced run. */
  meta: FlightMeta | null;
}

export interface StreamWaitInput {
  epoch: number;
  afterId: string;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
}

export interface StreamWaitReply {
  /**
   * The run's entries right after `afterId` that the wake-up itself brought (a Redis progress notice
   * carries small appends), oldest first: the reader takes them without reading. Empty: read to know.
   */
  entries: StreamEntry[];
}

/**
 * Adapters MUST: check the fence inside `appendStream` as `complete` does (a stale owner's append is
 * refused); give every stream a TTL; keep a run's stream apart from other runs' (a new epoch starts an
 * empty stream); let a reader read at its own pace from any id (no per-reader buffering).
 */
export interface FlightStreamCoordinator {
  /** Appends chunks to the stream of the fenced owner's active run, in one step. */
  appendStream(fence: Fence, input: StreamAppendInput): Promise<StreamAppendReply>;
  /** Reads entries of the run `epoch` after `afterId`, with the flight's metadata. */
  readStream(ref: FlightRef, input: StreamReadInput): Promise<StreamReadReply>;
  /**
   * Resolves when the run `epoch` may have entries after `afterId` (with them when it has them at hand),
   * a newer run or a terminal status may have come, `timeoutMs` passed or `signal` aborted. Never rejects
   * (readers poll as a safety net).
   */
  waitForStream(ref: FlightRef, input: StreamWaitInput): Promise<StreamWaitReply>;
}

/** A coordinator with the streaming extension. */
export type StreamingFlightCoordinator = FlightCoordinator & FlightStreamCoordinator;

/** True when `coordinator` implements the streaming extension. */
export function supportsStreams(coordinator: FlightCoordinator): coordinator is StreamingFlightCoordinator {
  const c = coordinator as Partial<FlightStreamCoordinator>;
  return typeof c.appendStream === 'function' && typeof c.readStream === 'function' && typeof c.waitForStream === 'function';
}
