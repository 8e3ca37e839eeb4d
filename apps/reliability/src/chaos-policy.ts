/** The chaos workers' takeover time: a Redis pause at least this long costs a run in progress its lease. */
export const CHAOS_TAKEOVER_AFTER_MS = 1500;
