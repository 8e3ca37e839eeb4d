import type { RunScope } from '../run/run-scope.js';
import type { Fence } from '../state/types.js';
import type { FlightContext } from './types.js';

/** The context a supplier receives; its `signal` is created only if the supplier reads it. */
export class SupplierContext implements FlightContext {
  constructor(
    /** The attempt's scope: the run's, or the attempt's own (guards with retries). */
    private readonly scope: RunScope,
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
    return this.scope.signal;
  }
}
