/** The API of `resumable-stream` 2.x, as this drop-in offers it. */
import type { SingleFlight } from '@flight/core';
import type { FlightCoordinator } from '@flight/core/adapter';

export interface ResumableStreamContext {
  /**
   * The stream of `streamId`: the one in progress, followed from its start (or after `skipCharacters`
   * characters), or a new one from `makeStream` when there is none. Null when the stream is done.
   */
  resumableStream(
    streamId: string,
    makeStream: () => ReadableStream<string>,
    skipCharacters?: number,
  ): Promise<ReadableStream<string> | null>;
  /**
   * The stream in progress of `streamId`, from its start or after `skipCharacters` characters. Null when it
   * is done, undefined when there is no stream of that id. Never runs anything.
   */
  resumeExistingStream(streamId: string, skipCharacters?: number): Promise<ReadableStream<string> | null | undefined>;
  /** Starts the stream of `streamId` from `makeStream` (or joins the one in progress); null when it is done. */
  createNewResumableStream(
    streamId: string,
    makeStream: () => ReadableStream<string>,
    skipCharacters?: number,
  ): Promise<ReadableStream<string> | null>;
  /** Null when there is no stream of `streamId`, true while it is in progress, `'DONE'` once it is done. */
  hasExistingStream(streamId: string): Promise<null | true | 'DONE'>;
  /**
   * This drop-in's addition: stops the context (its heartbeats and subscriber connection, and the Redis
   * connection it made; a client you passed stays open). Streams still running are given up.
   */
  close(): Promise<void>;
}

/** The options every entry point takes (`resumable-stream`'s, and what this drop-in adds). */
export interface ContextOptions {
  /**
   * Keeps the program alive until a promise settles (Next.js `after`, Vercel's `waitUntil`): it gets each
   * stream's run, so the producer finishes even when its reader went away. Null on a long-lived server.
   */
  waitUntil: ((promise: Promise<unknown>) => void) | null;
  /** The prefix of the Redis keys (of the coordinator this context makes). @default 'resumable-stream' */
  keyPrefix?: string;
  /**
   * How long a done stream's chunks are kept (a resume after it gets them; `hasExistingStream` says `'DONE'`
   * while they are). @default 86_400_000 (24 hours, as `resumable-stream` keeps its done marker)
   */
  doneTtlMs?: number;
  /** Accepted for compatibility: readers of a stream whose end notice was lost end by polling its record. */
  doneWatchdogIntervalMs?: number;
  /** Accepted for compatibility and not used: this context's coordinator has its own subscriber connection. */
  subscriber?: unknown;
}

/**
 * A coordinator whose flight records can be read: the Redis coordinators of `@flight/redis-ioredis` and
 * `@flight/redis-node` (`createIoredisCoordinator`, `createNodeRedisCoordinator`).
 */
export type StreamCoordinator = FlightCoordinator & {
  /** The record of a flight, or null when there is none. */
  readMeta(ref: { stage: string; key: string }): Promise<{ status: string; epoch: number } | null>;
};

/** What a context runs on: a Redis coordinator of this project, and the single-flight over it. */
export interface ContextBackend {
  coordinator: StreamCoordinator;
  flights?: SingleFlight;
  /** The context made the coordinator: it closes it. */
  ownsCoordinator?: boolean;
}
