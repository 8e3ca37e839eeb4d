import type { RunScope } from '../run/run-scope.js';
import type { Fence } from '../state/types.js';
import type { FlightContext } from './types.js';

/** The context a supplier receives; its `signal` is created only if the supplier reads it. */
export class SupplierContext implements FlightContext {
  constructor(
    private readonly run: RunScope,
    /** The attempt's own signal (guards with retries), else the run's. */
    private readonly attemptSignal: AbortSignal | undefined,
    readonly stage: string,
    readonly key: string,
    readonly role: 'owner' | 'local',
    readonly epoch: number | undefined,
    readonly attempt: number,
    readonly progress: () => void,
    /** The owner's fence (owner runs only): streamed runs write their chunks under it. */
    private readonly fence?: Fence,
  ) {}

  /** The fence of the owner run `context` belongs to; undefined for a run without a lease. */
  static fenceOf(context: FlightContext): Fence | undefined {
    return context instanceof SupplierContext ? context.fence : undefined;
  }

  get signal(): AbortSignal {
    return this.attemptSignal ?? this.run.signal;
  }
}
