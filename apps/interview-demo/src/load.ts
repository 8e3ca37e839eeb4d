/** Concurrent request bursts over several nodes (used by `pnpm demo` and the tests). */
export interface BurstResponse {
  status: number;
  role: string | null;
  node: string | null;
  body: any;
  ms: number;
}

export interface StatsSnapshot {
  calls: number;
  inFlight: number;
  maxInFlight: number;
  byStage: Record<string, number>;
  bySession: Record<string, { calls: number; inFlight: number; maxConcurrent: number }>;
  failures: Record<string, number>;
}

/** Sends `count` identical POSTs at once, spread round-robin over `nodeUrls`. Never rejects: network errors come back as status 0. */
export async function burst(nodeUrls: readonly string[], path: string, body: unknown, count: number, timeoutMs = 60_000): Promise<BurstResponse[]> {
  return Promise.all(Array.from({ length: count }, (_, i) => post(`${nodeUrls[i % nodeUrls.length]}${path}`, body, timeoutMs)));
}

export async function post(url: string, body: unknown, timeoutMs = 60_000): Promise<BurstResponse> {
  const started = Date.now();
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // keep the text
    }
    return { status: res.status, role: res.headers.get('x-flight-role'), node: res.headers.get('x-flight-node'), body: parsed, ms: Date.now() - started };
  } catch (error) {
    return { status: 0, role: null, node: null, body: { error: String((error as Error)?.message ?? error) }, ms: Date.now() - started };
  }
}

export async function modelStats(modelUrl: string): Promise<StatsSnapshot> {
  const res = await fetch(`${modelUrl}/stats`);
  return (await res.json()) as StatsSnapshot;
}

export function countBy<T>(items: readonly T[], by: (item: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const item of items) out[by(item)] = (out[by(item)] ?? 0) + 1;
  return out;
}
