/**
 * The supplier `execute` runs for a streamed flight: it runs the caller's chunk supplier, hands every
 * chunk to this node's callers at once (the log) and to the other nodes' (fenced, batched appends), checks
 * the caps, and returns the chunk list as the flight's value (its stored result).
 */
import { FlightStreamLimitError, FlightValidationError } from '../errors.js';
import { SupplierContext } from '../flight/supplier-context.js';
import type { FlightContext, Supplier } from '../flight/types.js';
import type { Clock } from '../ports/clock.js';
import type { FlightLogger } from '../ports/logger.js';
import type { FlightStreamCoordinator } from '../ports/stream-coordinator.js';
import { decodeChunk, toStoredChunk } from './chunk-codec.js';
import type { ResolvedStreamOptions } from './options.js';
import { StreamAppender } from './stream-appender.js';
import type { StreamLog } from './stream-log.js';
import type { StreamChunk, StreamJson } from './types.js';

/** What the caller of `executeStream` passes: the chunks of one run. */
export type ChunkSupplier<C extends StreamChunk> = (context: FlightContext) => AsyncIterable<C> | Iterable<C>;

export interface StreamedSupplierSpec {
  log: StreamLog;
  /** Where other nodes read the chunks; undefined in local mode. */
  coordinator: FlightStreamCoordinator | undefined;
  clock: Clock;
  logger: FlightLogger;
  options: ResolvedStreamOptions;
  /** TTL of the run's stream on the coordinator. */
  ttlMs: number;
  /** Hybrid mode: see `AppenderSpec.keepRunWhenUnreachable`. */
  keepRunWhenUnreachable: boolean;
  /** Told how many chunks each attempt produced, once it ends. */
  produced?: ((chunks: number) => void) | undefined;
}

function iterate<C>(chunks: AsyncIterable<C> | Iterable<C>): AsyncIterable<C> | Iterable<C> {
  const value = chunks as Partial<AsyncIterable<C> & Iterable<C>> | null | undefined;
  if (value && (typeof value[Symbol.asyncIterator] === 'function' || typeof value[Symbol.iterator] === 'function')) return chunks;
  throw new FlightValidationError('a stream supplier must return an AsyncIterable (or Iterable) of chunks');
}

export function streamedSupplier<C extends StreamChunk>(supplier: ChunkSupplier<C>, spec: StreamedSupplierSpec): Supplier<StreamJson[]> {
  const { log, coordinator, clock, logger, options, ttlMs, keepRunWhenUnreachable, produced } = spec;
  const { maxChunks, maxBytes, batchMs } = options;
  /**
   * An attempt that failed after streaming chunks is not attempted again in the same run (a guard retry):
   * callers already hold its chunks. Its error ends the run instead.
   */
  let failedAfterChunks: { run: number; error: unknown } | undefined;
  return async (context) => {
    if (failedAfterChunks && failedAfterChunks.run === context.run) throw failedAfterChunks.error;
    const run = log.begin(context.run, true);
    const fence = SupplierContext.fenceOf(context);
    const appender =
      fence && coordinator
        ? new StreamAppender({ coordinator, fence, clock, logger, batchMs, ttlMs, maxChunks, maxBytes, keepRunWhenUnreachable })
        : undefined;
    const stored: StreamJson[] = [];
    let bytes = 0;
    try {
      for await (const chunk of iterate(supplier(context))) {
        const form = toStoredChunk(chunk);
        const text = JSON.stringify(form);
        bytes += Buffer.byteLength(text, 'utf8');
        if (stored.length >= maxChunks || bytes > maxBytes) {
          throw new FlightStreamLimitError(`the stream passed its cap (${maxChunks} chunks, ${maxBytes} bytes)`, {
            context: { stage: context.stage, key: context.key, chunks: stored.length + 1, bytes },
          });
        }
        stored.push(form);
        appender?.add(text);
        // The log gets its own decoded copy of a JSON or bytes chunk (as a follower's node does), never the producer's.
        log.push(run, typeof form === 'string' ? form : decodeChunk(text));
        context.progress();
      }
      await appender?.drain();
      return stored;
    } catch (error) {
      appender?.stop();
      if (stored.length > 0) failedAfterChunks = { run: context.run, error };
      throw error;
    } finally {
      log.end(run);
      produced?.(stored.length);
    }
  };
}
