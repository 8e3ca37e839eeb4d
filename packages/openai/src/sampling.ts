/**
 * Which calls may share one answer. A request that samples — `temperature` above 0 or `top_p` below 1,
 * and the API's defaults are 1 and 1 — without a `seed` asks for an answer of its own: two such callers
 * who wanted independent samples must not get the same one. That is a semantic choice, so it is the
 * caller's: `share: 'always'` coalesces them too.
 */
export type SharePolicy = 'deterministic-only' | 'always';

export const SHARE_POLICIES: readonly SharePolicy[] = ['deterministic-only', 'always'];

/** True when `body` asks for a sampled answer without a seed (embeddings never sample). */
export function samplesFreely(body: Record<string, unknown>): boolean {
  if (body.seed !== undefined && body.seed !== null) return false;
  const temperature = typeof body.temperature === 'number' ? body.temperature : 1;
  const topP = typeof body.top_p === 'number' ? body.top_p : 1;
  return temperature > 0 || topP < 1;
}
