import type { RunScope } from '../run/run-scope.js';
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
  ) {}

  get signal(): AbortSignal {
    return this.attemptSignal ?? this.run.signal;
  }
}
