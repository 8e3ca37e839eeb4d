/** The marker a caller with `onRestart: 'restart'` receives when the run it was reading is replaced. */
export class FlightStreamRestart {
  constructor(
    /** The replaced run's epoch (undefined for a run without a lease). */
    readonly previousEpoch: number | undefined,
    /** The epoch of the run whose chunks follow, from its first one. */
    readonly epoch: number | undefined,
  ) {}
}
