/**
 * The four interview stages and their single-flight policies, in one place.
 *
 * | stage                  | the model request names (its key)       | session lock | L1  |
 * |------------------------|-----------------------------------------|--------------|-----|
 * | interview-evaluation   | sessionId, questionNumber, answer       | no           | on  |
 * | interview-followup     | sessionId, currentQuestion, answer      | no           | on  |
 * | interview-extraction   | sessionId, fileUrl                      | yes          | on  |
 * | interview-demeanor     | sessionId, imageUrl                     | yes          | off |
 */
import type { StagePolicyInput } from '@flight/core';

export const STAGES = {
  evaluation: 'interview-evaluation',
  followup: 'interview-followup',
  extraction: 'interview-extraction',
  demeanor: 'interview-demeanor',
} as const;

/** The extra GET route coalesced by the @flight/express middleware (the whole HTTP response is shared). */
export const REPORT_STAGE = 'interview-report';

export type StageName = (typeof STAGES)[keyof typeof STAGES];
export const STAGE_NAMES: readonly StageName[] = Object.values(STAGES);

export interface StageTuning {
  /** Owner heartbeat cadence; takeover after 3 missed beats. @default 1000 (env FLIGHT_HEARTBEAT_MS) */
  heartbeatIntervalMs?: number;
  /** Per-attempt model timeout inside the guard. @default 30000 (env MODEL_TIMEOUT_MS) */
  modelTimeoutMs?: number;
}

/** The stage policies handed to `createSingleFlight({ stages })`. */
export function stagePolicies(tuning: StageTuning = {}): Record<StageName | typeof REPORT_STAGE, StagePolicyInput> {
  const heartbeatIntervalMs = tuning.heartbeatIntervalMs ?? 1000;
  const timeoutMs = tuning.modelTimeoutMs ?? 30_000;
  const lease: StagePolicyInput = {
    heartbeatIntervalMs,
    takeoverAfterMs: 3 * heartbeatIntervalMs,
    // Followers re-read the state at least this often (safety net behind the stream wake-up).
    pollIntervalMs: Math.max(250, Math.min(1000, heartbeatIntervalMs)),
    maxRunMs: Math.max(60_000, 2 * timeoutMs),
  };
  const guard = (ms: number): StagePolicyInput['guard'] => ({
    timeoutMs: ms,
    retry: { maxAttempts: 2, initialDelayMs: 100, maxDelayMs: 1000 },
    circuitBreaker: { consecutiveFailures: 5, halfOpenAfterMs: 10_000 },
    bulkhead: { limit: 16, queue: 256 },
  });
  return {
    // Light stages: request-level reuse through single-flight alone, replayed from L1.
    [STAGES.evaluation]: { ...lease, l1: { enabled: true, ttlMs: 30_000 }, guard: guard(timeoutMs) },
    [STAGES.followup]: { ...lease, l1: { enabled: true, ttlMs: 30_000 }, guard: guard(timeoutMs) },
    // Heavy stages: a per-session lock first, so one session never runs two heavy jobs at once.
    [STAGES.extraction]: {
      ...lease,
      l1: { enabled: true, ttlMs: 60_000 },
      sessionLock: { enabled: true, ttlMs: 2 * timeoutMs + 10_000, waitMs: 60_000 },
      guard: guard(2 * timeoutMs),
      maxRunMs: Math.max(120_000, 4 * timeoutMs),
    },
    // Demeanor: every frame is different; never replay from the node-local cache.
    [STAGES.demeanor]: {
      ...lease,
      l1: { enabled: false },
      sessionLock: { enabled: true, ttlMs: timeoutMs + 10_000, waitMs: 60_000 },
      guard: guard(timeoutMs),
    },
    // GET /api/sessions/:id/report through the middleware: responses kept briefly, no L1.
    [REPORT_STAGE]: { ...lease, l1: { enabled: false }, resultTtlMs: 5000, guard: guard(timeoutMs) },
  };
}
