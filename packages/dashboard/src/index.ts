/**
 * `@flight/dashboard`: a dashboard of distributed single-flight to mount in your own server (as Bull Board
 * is): the flights in progress across the cluster, herd savings over time, per-stage wait and run
 * durations, degraded and unreachable nodes, takeovers and fallbacks. Read-only by default.
 */
export { createFlightDashboard, type DashboardHandler, type FlightDashboard } from './dashboard.js';
export type { FlightDashboardOptions, FlightLister, PeerHeaders, SharedFlightListing } from './options.js';
export type { DashboardState, NodeStatus, NodeSummary } from './state.js';
export type { CallerRole, LocalFlight, NotableEvent, StageView, TimelineBucket } from './collector.js';
export type { DurationSummary } from './histogram.js';
export type { DashboardRoute } from './handler.js';
export { DashboardCrossSiteError, DashboardReadOnlyError } from './errors.js';
