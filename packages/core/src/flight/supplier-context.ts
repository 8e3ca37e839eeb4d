import type { RunScope } from '../run/run-scope.js';
import type { Fence } from '../state/types.js';
import type { FlightContext } from './types.js';

/** The supplier context fields of one attempt. */
export interface AttemptContext {
  role: 'owner' | 'local';
  epoch: number | undefined;
  /** The run's identity (`FlightContext.run`). */
  run: number;
  attempt: number;
  /** The run takes over a run whose owner died, stalled or failed retryably. */
  takeover: boolean;
  progress: () => void;
  fence?: Fence;
}

/** The context a supplier receives; its `signal` is created only if the supplier reads it. */
export class SupplierContext implements FlightContext {
  readonly stage: string;
  readonly key: string;
  readonly role: 'owner' | 'local';
  readonly epoch: number | undefined;
  readonly run: number;
  readonly attempt: number;
  readonly takeover: boolean;
  readonly progress: () => void;
  /** The owner's fence (owner runs only): streamed runs write their chunks under it. */
  private readonly fence: Fence | undefined;

  constructor(
    /** The attempt's scope: the run's, or the attempt's own (guards with retries). */
    private readonly scope: RunScope,
    ref: { stage: string; key: string },
    attempt: AttemptContext,
  ) {
    this.stage = ref.stage;
    this.key = ref.key;
    this.role = attempt.role;
    this.epoch = attempt.epoch;
    this.run = attempt.run;
    this.attempt = attempt.attempt;
    this.takeover = attempt.takeover;
    this.progress = attempt.progress;
    this.fence = attempt.fence;
  }

  /** The fence of the owner run `context` belongs to; undefined for a run without a lease. */
  static fenceOf(context: FlightContext): Fence | undefined {
    return context instanceof SupplierContext ? context.fence : undefined;
  }

  get signal(): AbortSignal {
    return this.scope.signal;
  }
}
