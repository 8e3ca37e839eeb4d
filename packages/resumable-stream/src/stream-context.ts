/**
 * The context behind every entry point: each stream id is a streamed flight (`executeStream`) whose chunks
 * live in Redis, so any server can read a stream from its start or after a number of characters, during the
 * run and after it, and a stream whose producer died is taken over by a caller that can make it again — or
 * ends with an error for a reader that cannot, never a hang.
 */
import { createSingleFlight, FlightConfigurationError, type FlightStream, type SingleFlight } from '@flight/core';
import type { ContextBackend, ContextOptions, ResumableStreamContext } from './types.js';

/** The stage every stream runs under. */
export const STREAM_STAGE = 'resumable-stream';
const DAY_MS = 86_400_000;

/** The chunks of a `ReadableStream<string>`, as the flight's supplier yields them. */
async function* chunksOf(stream: ReadableStream<string>): AsyncGenerator<string> {
  const reader = stream.getReader();
  try {
    for (let next = await reader.read(); !next.done; next = await reader.read()) yield next.value;
  } finally {
    reader.releaseLock();
  }
}

/** The flight's chunks as a `ReadableStream<string>`, without its first `skip` characters. Cancelling it detaches this reader only. */
function readableOf(flight: FlightStream<string>, skip: number): ReadableStream<string> {
  const chunks = flight[Symbol.asyncIterator]();
  let toSkip = skip;
  return new ReadableStream<string>({
    async pull(sink) {
      try {
        for (;;) {
          const next = await chunks.next();
          if (next.done) return sink.close();
          if (toSkip >= next.value.length) {
            toSkip -= next.value.length;
            continue;
          }
          sink.enqueue(toSkip > 0 ? next.value.slice(toSkip) : next.value);
          toSkip = 0;
          return;
        }
      } catch (error) {
        sink.error(error);
      }
    },
    cancel() {
      // Not awaited: a generator's return waits for its pending read (the next chunk), which may be far off.
      void chunks.return?.().catch(() => undefined);
    },
  });
}

function checkSkip(skip: number | undefined): number {
  if (skip === undefined) return 0;
  if (!Number.isInteger(skip) || skip < 0)
    throw new FlightConfigurationError(`skipCharacters must be a whole number ≥ 0, got ${String(skip)}`);
  return skip;
}

function checkStreamId(streamId: string): string {
  if (typeof streamId !== 'string' || streamId.length === 0 || streamId.length > 512)
    throw new FlightConfigurationError('streamId must be a string of 1 to 512 characters');
  return streamId;
}

/** The context over `backend` (see the entry points for how each builds it). */
export function createStreamContext(options: ContextOptions, backend: ContextBackend): ResumableStreamContext {
  const doneTtlMs = options.doneTtlMs ?? DAY_MS;
  if (!Number.isInteger(doneTtlMs) || doneTtlMs < 1000)
    throw new FlightConfigurationError('doneTtlMs must be a whole number of milliseconds ≥ 1000');
  const { coordinator } = backend;
  const flights: SingleFlight =
    backend.flights ??
    createSingleFlight({
      coordinator,
      defaults: { l1: { enabled: false } },
      stages: { [STREAM_STAGE]: { resultTtlMs: doneTtlMs } },
    });
  const waitUntil = options.waitUntil;

  /** The record of a stream's flight, or null when there is none. */
  const recordOf = (streamId: string) => coordinator.readMeta({ stage: STREAM_STAGE, key: checkStreamId(streamId) });

  const state = async (streamId: string): Promise<null | true | 'DONE'> => {
    const meta = await recordOf(streamId);
    if (!meta) return null;
    return meta.status === 'SUCCEEDED' ? 'DONE' : true;
  };

  /** Callers waiting for their stream to be in Redis, by stream id: a run this server follows is there. */
  const joining = new Map<string, Set<() => void>>();
  flights.on('follower', (event) => {
    if (event.stage === STREAM_STAGE) for (const joined of joining.get(event.key) ?? []) joined();
  });

  /**
   * Runs the stream of `streamId` or joins its run, and resolves once the stream is in Redis (its run started
   * here, or this server follows it), as `resumable-stream` resolves once its marker is set: from then on,
   * `hasExistingStream` and `resumeExistingStream` on any server see it.
   */
  const run = async (streamId: string, makeStream: () => ReadableStream<string>, skip: number) => {
    let inRedis!: () => void;
    const there = new Promise<void>((resolve) => (inRedis = resolve));
    const waiters = joining.get(streamId) ?? new Set();
    joining.set(streamId, waiters.add(inRedis));
    const flight = flights.executeStream<string>(STREAM_STAGE, streamId, () => {
      inRedis();
      return chunksOf(makeStream());
    });
    // Started now, not on the first read; it goes on when its reader leaves (waitUntil keeps a serverless function alive).
    const ended = flight.result().catch(() => undefined);
    waitUntil?.(ended);
    void ended.then(inRedis);
    try {
      await there;
    } finally {
      waiters.delete(inRedis);
      if (waiters.size === 0 && joining.get(streamId) === waiters) joining.delete(streamId);
    }
    return readableOf(flight, skip);
  };

  /** `resumableStream` and `createNewResumableStream`: null once the stream is done, else it is run or joined. */
  const runUnlessDone = async (streamId: string, makeStream: () => ReadableStream<string>, skipCharacters?: number) => {
    const skip = checkSkip(skipCharacters);
    if ((await state(streamId)) === 'DONE') return null;
    return run(streamId, makeStream, skip);
  };

  return {
    resumableStream: runUnlessDone,
    createNewResumableStream: runUnlessDone,
    async resumeExistingStream(streamId, skipCharacters) {
      const skip = checkSkip(skipCharacters);
      const meta = await recordOf(streamId);
      if (!meta) return undefined;
      if (meta.status === 'SUCCEEDED') return null;
      // Follow the run in progress from its first chunk; never run anything.
      const flight = flights.executeStream<string>(
        STREAM_STAGE,
        streamId,
        () => {
          throw new Error('a resumed stream never runs');
        },
        { after: { epoch: meta.epoch, index: 0 } },
      );
      return readableOf(flight, skip);
    },
    hasExistingStream: state,
    async close() {
      if (!backend.flights) await flights.close();
      if (backend.ownsCoordinator) await coordinator.close();
    },
  };
}
