/**
 * The stage defaults the profile loops share: results kept 60 s as in the bench's distinct-keys scenario, no L1 (every call reaches the
 * coordinator), and no guard layers unless `guard` asks for them.
 */
export function profileDefaults(guard = { bulkhead: false, retry: false, circuitBreaker: false, timeoutMs: 60_000 }) {
  return { resultTtlMs: 60_000, failureTtlMs: 60_000, terminalTtlMs: 60_000, l1: { enabled: false }, guard };
}
