/**
 * One node's view of a streamed flight, shared by every caller of the flight on this node: the chunks of
 * its current run as they arrive (pushed by this node's owner run, or pulled from the coordinator by one
 * `StreamReader`), and a wake-up for callers waiting for more. Each caller keeps only a cursor (an index),
 * so memory per caller is constant; the node holds one copy of the run's chunks, bounded by the caps.
 */
import { deepFreeze } from '../results/deep-freeze.js';
import type { StreamChunk } from './types.js';

/**
 * A chunk of a log as one caller receives it: bytes are copied (a `Uint8Array` cannot be frozen, and a
 * caller writing into its chunk must not change what the others read); anything else is shared, frozen.
 */
export function chunkFor(chunk: StreamChunk): StreamChunk {
  return chunk instanceof Uint8Array ? chunk.slice() : chunk;
}

/** One run's chunks, as this node received them. */
export class StreamRun {
  readonly chunks: StreamChunk[] = [];
  /** The id of the last entry read from the coordinator (remote runs). */
  lastId = '';
  /** A local run that returned or threw: no chunk will be pushed any more. */
  ended = false;

  constructor(
    /** The run's epoch; undefined for a run without a lease (local mode, hybrid fallback). */
    readonly epoch: number | undefined,
    /** Pushed by this node's own run (rather than read from the coordinator). */
    readonly local: boolean,
  ) {}
}

export class StreamLog {
  /** The current run: the newest one this node knows of. */
  run: StreamRun | undefined = undefined;
  /** Callers of this node holding the log (see `StreamHub`). */
  holders = 0;
  /** Callers waiting for more than the log holds. */
  waiting = 0;
  /** When the log last got a run or a chunk (clock ms; 0 before): the flight progresses. */
  progressedAt = 0;
  private wake: (() => void) | undefined = undefined;
  private next: Promise<void> | undefined = undefined;

  constructor(private readonly now: () => number) {}

  /** A new run replaces the current one (its chunks start empty). */
  begin(epoch: number | undefined, local: boolean): StreamRun {
    const run = new StreamRun(epoch, local);
    this.run = run;
    this.progressedAt = this.now();
    this.notify();
    return run;
  }

  /**
   * Adds a chunk to `run` (ignored once another run replaced it). Every caller of this node reads the same
   * chunk: a JSON chunk is deep-frozen here, and bytes are copied per caller as they are read (`chunkFor`).
   * The chunk must be the log's own copy, never the producer's object.
   */
  push(run: StreamRun, chunk: StreamChunk): void {
    if (this.run !== run) return;
    if (typeof chunk === 'object' && chunk !== null && !(chunk instanceof Uint8Array)) deepFreeze(chunk);
    run.chunks.push(chunk);
    this.progressedAt = this.now();
    this.notify();
  }

  /** Marks a local run as done pushing. */
  end(run: StreamRun): void {
    run.ended = true;
    this.notify();
  }

  /** Resolves at the next change of the log (or `notify`). */
  changed(): Promise<void> {
    this.next ??= new Promise<void>((resolve) => (this.wake = resolve));
    return this.next;
  }

  /** Wakes every waiter (a change, or the flight settled). */
  notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    this.next = undefined;
    wake?.();
  }

  /** True while this node's own run is streaming into the log: nothing needs reading from the coordinator. */
  get pushedLocally(): boolean {
    return this.run !== undefined && this.run.local && !this.run.ended;
  }
}

/** The logs of this node's streamed flights, by flight id, kept while a caller holds them. */
export class StreamHub {
  private readonly logs = new Map<string, StreamLog>();

  constructor(private readonly now: () => number) {}

  hold(id: string): StreamLog {
    let log = this.logs.get(id);
    if (!log) this.logs.set(id, (log = new StreamLog(this.now)));
    log.holders++;
    return log;
  }

  /** The log of a flight held by some caller of this node. */
  get(id: string): StreamLog | undefined {
    return this.logs.get(id);
  }

  /**
   * Forgets the log of `id` on this node: callers that come from now on read a log of their own (the new
   * run's); the callers that hold the forgotten one keep reading it to its end.
   */
  forget(id: string): void {
    this.logs.delete(id);
  }

  release(id: string, log: StreamLog): void {
    if (--log.holders > 0) return;
    if (this.logs.get(id) === log) this.logs.delete(id);
    log.notify();
  }
}
