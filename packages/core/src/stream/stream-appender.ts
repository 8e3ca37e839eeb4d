/**
 * The owner's side of a run's stream on the coordinator: chunks produced within `batchMs` go out in one
 * fenced append (with 0, a chunk goes out at once when no append is in flight), at most one append in
 * flight at a time (later chunks wait for it, then go together).
 */
import { FlightFencedError, isCoordinationFailure, FlightStreamLimitError, toCoordinationError } from '../errors.js';
import type { Clock, TimerHandle } from '../ports/clock.js';
import type { FlightLogger } from '../ports/logger.js';
import type { FlightStreamCoordinator } from '../ports/stream-coordinator.js';
import type { Fence } from '../state/types.js';

export interface AppenderSpec {
  coordinator: FlightStreamCoordinator;
  fence: Fence;
  clock: Clock;
  logger: FlightLogger;
  batchMs: number;
  ttlMs: number;
  maxChunks: number;
  maxBytes: number;
  /**
   * Hybrid mode: an append that fails because the coordinator is unreachable stops the sharing instead of
   * failing the run — the run goes on for this node's callers, as a hybrid owner's run does when it
   * cannot store its result.
   */
  keepRunWhenUnreachable: boolean;
}

export class StreamAppender {
  private pending: string[] = [];
  private inFlight: Promise<void> | undefined = undefined;
  private timer: TimerHandle | undefined = undefined;
  private failure: Error | undefined = undefined;
  /** The run was forgotten (or, in hybrid mode, the coordinator is unreachable): it goes on for this node's callers, nothing more is shared. */
  private forgotten = false;
  /** Chunks the coordinator took so far: where the next append must start (`StreamAppendInput.from`). */
  private appended = 0;

  constructor(private readonly spec: AppenderSpec) {}

  /** Queues an encoded chunk; throws the failure of an earlier append (fenced, cap, coordinator down). */
  add(encoded: string): void {
    if (this.failure) throw this.failure;
    if (this.forgotten) return;
    this.pending.push(encoded);
    if (this.timer !== undefined || this.inFlight) return;
    // batchMs 0: out at once (before this node's callers get the chunk); what follows while it is in
    // flight goes together in the next append.
    if (this.spec.batchMs === 0) this.flush();
    else this.timer = this.spec.clock.setTimeout(() => this.flush(), this.spec.batchMs);
  }

  /** Sends what is queued and waits for every append; throws the failure of any of them. */
  async drain(): Promise<void> {
    this.cancelTimer();
    while (!this.failure && (this.pending.length > 0 || this.inFlight)) {
      if (this.inFlight) await this.inFlight;
      else this.flush();
    }
    if (this.failure) throw this.failure;
  }

  /** Drops what is queued (the run failed or was abandoned). */
  stop(): void {
    this.cancelTimer();
    this.pending = [];
    this.forgotten = true;
  }

  private cancelTimer(): void {
    if (this.timer === undefined) return;
    this.spec.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private flush(): void {
    this.timer = undefined;
    if (this.inFlight || this.pending.length === 0 || this.failure || this.forgotten) return;
    const chunks = this.pending;
    this.pending = [];
    const { coordinator, fence, ttlMs, maxChunks, maxBytes } = this.spec;
    const ref = { stage: fence.stage, key: fence.key };
    let sent: Promise<void>;
    try {
      sent = coordinator.appendStream(fence, { chunks, ttlMs, maxChunks, maxBytes, from: this.appended }).then((reply) => {
        if (reply.ok) {
          this.appended += chunks.length;
          return;
        }
        if (reply.code === 'FORGOTTEN' || reply.code === 'POSITION') {
          const why = reply.code === 'FORGOTTEN' ? 'streamed run forgotten' : 'the stream does not hold what this run appended';
          this.spec.logger.info({ ...ref, epoch: fence.epoch }, `${why}; its chunks go to this node's callers only`);
          this.stop();
          return;
        }
        this.failure =
          reply.code === 'LIMIT'
            ? new FlightStreamLimitError('the coordinator refused the append: the stream would pass its cap', {
                context: { ...ref, maxChunks, maxBytes },
              })
            : new FlightFencedError(`stream append refused: epoch ${fence.epoch} no longer owns the flight`, {
                context: { ...ref, epoch: fence.epoch },
              });
      });
    } catch (error) {
      sent = Promise.reject(error);
    }
    this.inFlight = sent
      .catch((error: unknown) => {
        const failure = toCoordinationError(error, ref);
        if (!this.spec.keepRunWhenUnreachable || !isCoordinationFailure(failure)) {
          this.failure = failure;
          return;
        }
        this.spec.logger.warn(
          { ...ref, epoch: fence.epoch, err: failure },
          "stream append failed; the run goes on for this node's callers only",
        );
        this.stop();
      })
      .finally(() => {
        this.inFlight = undefined;
        if (this.pending.length > 0) this.flush();
      });
  }
}
