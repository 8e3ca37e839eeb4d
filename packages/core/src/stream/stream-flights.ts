/**
 * `executeStream` of one `SingleFlight`: each call is an `execute` of the flight whose supplier streams
 * (see streamed-supplier.ts), plus this node's shared log of the run's chunks, filled by the node's own
 * run or read from the coordinator (see stream-reader.ts).
 */
import { FlightStreamExpiredError, FlightStreamUnsupportedError, FlightValidationError } from '../errors.js';
import type { FlightEventMap } from '../events/types.js';
import type { FlightMode } from '../flight/options.js';
import type { FlightResult, StreamExecuteOptions, Supplier } from '../flight/types.js';
import { assertRequestKey, flightId } from '../keys/key-builder.js';
import { assertStageName, type StagePolicy } from '../policy/stage-policy.js';
import type { Clock } from '../ports/clock.js';
import type { FlightCoordinator } from '../ports/coordinator.js';
import type { FlightLogger } from '../ports/logger.js';
import { supportsStreams, type FlightStreamCoordinator } from '../ports/stream-coordinator.js';
import { fromStoredChunks } from './chunk-codec.js';
import { FlightStreamCall } from './flight-stream.js';
import { resolveStreamOptions, storedListCap } from './options.js';
import type { FlightStreamRestart } from './restart.js';
import type { StreamHub, StreamLog } from './stream-log.js';
import { demandChunks } from './stream-reader.js';
import { streamedSupplier, type ChunkSupplier } from './streamed-supplier.js';
import type { ExecuteStreamOptions, FlightStream, StreamChunk } from './types.js';

/** What a streamed flight needs of its `SingleFlight`. */
export interface StreamHost {
  readonly mode: FlightMode;
  on(event: 'follower', listener: (payload: FlightEventMap['follower']) => void): () => void;
  policy(stage: string): StagePolicy;
  execute<T>(stage: string, key: string, supplier: Supplier<T>, options: StreamExecuteOptions): Promise<FlightResult<T>>;
}

export interface StreamDeps {
  coordinator: FlightCoordinator;
  clock: Clock;
  logger: FlightLogger;
  /** Counts the chunks a run of this node produced (telemetry on). */
  streamChunks?: ((stage: string, chunks: number) => void) | undefined;
  /** The node's stream logs (`NodeCopies.streams`: a forget drops a flight's log for later callers). */
  hub: StreamHub;
}

export class StreamFlights {
  private readonly hub: StreamHub;
  /** Logs whose reader runs. */
  private readonly reading = new WeakSet<StreamLog>();
  private readonly coordinator: FlightStreamCoordinator | undefined;

  constructor(
    private readonly host: StreamHost,
    private readonly deps: StreamDeps,
  ) {
    this.hub = deps.hub;
    this.coordinator = host.mode !== 'local' && supportsStreams(deps.coordinator) ? deps.coordinator : undefined;
    // A call of this node joined a run: its reader (idle until it knows a run to read) reads it at once.
    if (this.coordinator) host.on('follower', (joined) => this.hub.get(flightId(joined))?.notify());
  }

  open<C extends StreamChunk>(
    stage: string,
    key: string,
    supplier: ChunkSupplier<C>,
    options: ExecuteStreamOptions,
  ): FlightStream<C> | FlightStream<C | FlightStreamRestart> {
    assertStageName(stage);
    assertRequestKey(key, stage);
    if (typeof supplier !== 'function') throw new FlightValidationError('supplier must be a function', { context: { stage, key } });
    if (this.host.mode !== 'local' && !this.coordinator) {
      throw new FlightStreamUnsupportedError(`executeStream in ${this.host.mode} mode needs a coordinator with the streaming extension`, {
        context: { stage, key },
      });
    }
    const policy = this.host.policy(stage);
    const resolved = resolveStreamOptions(options, policy);
    const ref = { stage, key };
    const { after } = resolved;
    // A resumed caller continues a run; it never starts a flight (see `ExecuteStreamOptions.after`): as the
    // owner of a new one it fails at once, before its run appears in the node's log. Taking over a run whose
    // owner died is continuing it.
    const resumable = (streamed: Supplier<unknown>): Supplier<unknown> =>
      after
        ? (context) => {
            if (context.takeover) return streamed(context);
            throw new FlightStreamExpiredError('the run this stream resumes is gone: none in progress, none kept', {
              context: { stage, key, epoch: after.epoch, index: after.index },
            });
          }
        : streamed;
    const id = flightId(ref);
    const { coordinator } = this;
    const { clock, logger } = this.deps;
    return new FlightStreamCall<C>(
      ref,
      resolved.onRestart,
      () => {
        const log = this.hub.hold(id);
        const streamed = streamedSupplier(supplier, {
          log,
          coordinator,
          clock,
          logger,
          options: resolved,
          ttlMs: policy.maxRunMs,
          keepRunWhenUnreachable: this.host.mode === 'hybrid',
          produced: this.deps.streamChunks && ((chunks: number) => this.deps.streamChunks?.(stage, chunks)),
        });
        // The wait for the outcome lasts as long as the run progresses (see `StreamExecuteOptions`).
        // The stored chunk list holds the chunks (at most maxBytes) plus its brackets and a comma per chunk.
        const executeOptions: StreamExecuteOptions = {
          progressedAt: () => log.progressedAt,
          maxResultBytes: storedListCap(resolved.maxBytes, resolved.maxChunks),
          // A stream is live chunks of one run: never a stale copy of an earlier one.
          fresh: true,
        };
        if (options.signal) executeOptions.signal = options.signal;
        if (options.sessionId !== undefined) executeOptions.sessionId = options.sessionId;
        if (options.keepFailures !== undefined) executeOptions.keepFailures = options.keepFailures;
        if (options.cancelWhenAbandoned) executeOptions.cancelWhenAbandoned = true;
        if (after) executeOptions.keepFailures = false;
        const { resultTtlMs } = options;
        if (resultTtlMs !== undefined)
          executeOptions.resultTtlMs = typeof resultTtlMs === 'number' ? resultTtlMs : (value) => resultTtlMs(fromStoredChunks(value, ref));
        // What the node's reader needs, made once per caller (`demand` runs each time the caller waits).
        const reader = coordinator && { coordinator, ref, log, clock, logger, pollIntervalMs: policy.pollIntervalMs };
        return {
          log,
          outcome: this.host.execute(stage, key, resumable(streamed), executeOptions),
          demand: () => {
            if (reader) demandChunks(reader, this.reading);
          },
          release: () => this.hub.release(id, log),
          decode: (value) => fromStoredChunks(value, ref) as C[],
        };
      },
      after,
    );
  }
}
