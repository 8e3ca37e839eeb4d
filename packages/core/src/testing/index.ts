export { registerCoordinatorConformance, LEASE, type ConformanceOptions, type ConformanceTarget } from './conformance.js';
export { runModelComparison, opArbitrary, type ModelRunOptions } from './model.js';
export { createManualClock, type ManualClock } from './manual-clock.js';
export type { InspectableCoordinator } from '../ports/coordinator.js';
