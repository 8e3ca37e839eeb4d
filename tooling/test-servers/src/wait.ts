/**
 * `vi.waitFor` options for a test waiting on something that follows from what it just did (a subscription
 * confirmed, a connection closed, a body stopped): the bound is only reached on a heavily loaded machine, or
 * when the thing never happens.
 */
export const WAIT_FOR_EFFECT = { timeout: 10_000, interval: 20 } as const;
