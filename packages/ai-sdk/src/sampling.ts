/**
 * Which calls may share one answer. A call that samples — `temperature` above 0 or `topP` below 1 — without
 * a `seed` asks for an answer of its own: two callers who wanted independent samples must not get the same
 * one. An unset temperature counts as sampling (most providers default to 1). That is a semantic choice, so
 * it is the caller's: `share: 'always'` coalesces them too.
 */
export type SharePolicy = 'deterministic-only' | 'always';

export const SHARE_POLICIES: readonly SharePolicy[] = ['deterministic-only', 'always'];

/** True when the call options ask for a sampled answer without a seed. */
export function samplesFreely(params: { seed?: number | undefined; temperature?: number | undefined; topP?: number | undefined }): boolean {
  if (params.seed !== undefined && params.seed !== null) return false;
  const temperature = typeof params.temperature === 'number' ? params.temperature : 1;
  const topP = typeof params.topP === 'number' ? params.topP : 1;
  return temperature > 0 || topP < 1;
}
