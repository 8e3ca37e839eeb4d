/** The chaos workers' lease: renewed every CHAOS_HEARTBEAT_INTERVAL_MS, taken over after CHAOS_TAKEOVER_AFTER_MS of silence. */
export const CHAOS_HEARTBEAT_INTERVAL_MS = 500;
export const CHAOS_TAKEOVER_AFTER_MS = 1500;

/**
 * Whether a Redis pause of `ms` can cost a run in progress its lease: the owner's last renewal may be up to
 * a heartbeat interval old when the pause begins, and no renewal lands while it lasts.
 */
export const pauseCostsLease = (ms: number): boolean => ms + CHAOS_HEARTBEAT_INTERVAL_MS >= CHAOS_TAKEOVER_AFTER_MS;
