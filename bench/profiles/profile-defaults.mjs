/**
 * The stage defaults the profile loops share: results kept 10 s, no L1 (every call reaches the
 * coordinator), and no guard layers unless `guard` asks for them.
 */
export function profileDefaults(guard = { bulkhead: false, retry: false, circuitBreaker: false, timeoutMs: 60_000 }) {
  return { resultTtlMs: 10_000, failureTtlMs: 10_000, terminalTtlMs: 10_000, l1: { enabled: false }, guard };
}
