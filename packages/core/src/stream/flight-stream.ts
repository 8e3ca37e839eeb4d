/**
 * One caller's streamed flight: starts the flight on first use, then gives its chunks — from this node's
 * log while the run goes on, from the flight's value once it settled — in the owner's order, with the
 * takeover rule of `onRestart`.
 */
import { FlightStreamInterruptedError } from '../errors.js';
import type { FlightResult } from '../flight/types.js';
import { FlightStreamRestart } from './restart.js';
import { chunkFor, type StreamLog } from './stream-log.js';
import type { FlightStream, StreamChunk, StreamPosition, StreamRestartMode } from './types.js';

type Settled<C> = { ok: true; result: FlightResult<C[]> } | { ok: false; error: unknown };

/** What a `FlightStreamCall` needs from its node, once started. */
export interface StreamStart<C> {
  log: StreamLog;
  /** The flight, as `execute` settles it (its value is the stored chunk list). */
  outcome: Promise<FlightResult<unknown>>;
  /** Called when a caller waits at the end of the log (the node starts reading the coordinator). */
  demand: () => void;
  /** Called once the flight settled: the caller no longer needs the log. */
  release: () => void;
  decode: (value: unknown) => C[];
}

/** Not bound to any run yet. */
const UNBOUND = Symbol('unbound');

export class FlightStreamCall<C extends StreamChunk, Y = C> implements FlightStream<Y> {
  private started: { log: StreamLog; demand: () => void; outcome: Promise<FlightResult<C[]>> } | undefined;
  private settled: Settled<C> | undefined;
  private readEpoch: number | undefined;

  constructor(
    private readonly ref: { stage: string; key: string },
    private readonly onRestart: StreamRestartMode,
    private readonly start: () => StreamStart<C>,
    /** A resumed caller: the run and count of chunks it already has. */
    private readonly after?: StreamPosition,
  ) {}

  get epoch(): number | undefined {
    return this.readEpoch;
  }

  result(): Promise<FlightResult<Y[]>> {
    return this.begin().outcome as unknown as Promise<FlightResult<Y[]>>;
  }

  [Symbol.asyncIterator](): AsyncIterator<Y> {
    return this.chunks() as AsyncIterator<Y>;
  }

  private begin() {
    if (this.started) return this.started;
    const { log, outcome, demand, release, decode } = this.start();
    const decoded = outcome.then((result) => ({ ...result, value: decode(result.value) }));
    this.started = { log, demand, outcome: decoded };
    decoded
      .then(
        (result) => (this.settled = { ok: true, result }),
        (error: unknown) => (this.settled = { ok: false, error }),
      )
      .finally(() => {
        release();
        log.notify();
      });
    return this.started;
  }

  private async *chunks(): AsyncGenerator<C | FlightStreamRestart> {
    const { log, demand } = this.begin();
    let epoch: number | undefined | typeof UNBOUND = this.after && this.after.index > 0 ? this.after.epoch : UNBOUND;
    let index = epoch === UNBOUND ? 0 : this.after!.index;
    // A resumed caller that meets a run without chunks waits for them before calling it a restart: the
    // run may be its own acquisition of a flight that is gone, which fails without any.
    let resuming = epoch !== UNBOUND;
    /** The run this caller read from was replaced: the marker to yield, or the error that ends it. */
    const restart = (next: number | undefined): FlightStreamRestart => {
      const previous = epoch === UNBOUND ? undefined : epoch;
      if (this.onRestart === 'error') {
        throw new FlightStreamInterruptedError(
          `the run this caller streamed (epoch ${String(previous)}) was replaced by a new run (epoch ${String(next)}) after ${index} chunks`,
          { context: { ...this.ref, epoch: previous, newEpoch: next, received: index } },
        );
      }
      epoch = this.readEpoch = next;
      index = 0;
      return new FlightStreamRestart(previous, next);
    };
    for (;;) {
      const settled = this.settled;
      if (settled) {
        if (!settled.ok) throw settled.error;
        const { value, epoch: final } = settled.result;
        if (index > 0 && final !== undefined && epoch !== final) yield restart(final);
        // A run without a lease has no epoch in its result: the caller keeps the run id it read.
        if (final !== undefined) this.readEpoch = final;
        while (index < value.length) yield value[index++]!;
        return;
      }
      const run = log.run;
      if (run) {
        if (index === 0) epoch = this.readEpoch = run.epoch;
        else if (run.epoch !== epoch && !(resuming && run.chunks.length === 0)) {
          yield restart(run.epoch);
          continue;
        }
        if (index < run.chunks.length) {
          this.readEpoch = run.epoch;
          resuming = false;
          yield chunkFor(run.chunks[index++]!) as C;
          continue;
        }
      }
      log.waiting++;
      try {
        const changed = log.changed();
        demand();
        await changed;
      } finally {
        log.waiting--;
      }
    }
  }
}
