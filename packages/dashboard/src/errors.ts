import { FlightError } from '@flight/core';

/** A write (`POST <mount>/forget`) reached a dashboard created read-only (the default). */
export class DashboardReadOnlyError extends FlightError {
  static override readonly code = 'E_FLIGHT_DASHBOARD_READ_ONLY';
}

/** A write (`POST <mount>/forget`) came from another site (`Sec-Fetch-Site`, or an `Origin` other than the host). */
export class DashboardCrossSiteError extends FlightError {
  static override readonly code = 'E_FLIGHT_DASHBOARD_CROSS_SITE';
}
