/**
 * Stage policies: every knob of a stage's configuration, documented with its default,
 * and resolved in exactly one place (`resolveStagePolicy`).
 */
import { assertKnownOptions } from '../config/known-options.js';
import { FlightConfigurationError, FlightValidationError } from '../errors.js';
import type { FailureType } from '../state/types.js';

export interface GuardPolicy {
  /** Per-attempt timeout of the supplier; the supplier's signal aborts when it fires. `0` disables. @default 30000 */
  timeoutMs?: number;
  /** Concurrent supplier runs allowed per stage on this node, and how many may queue. `false` disables. @default { limit: 16, queue: 64 } */
  bulkhead?: { limit: number; queue?: number } | false;
  /** Opens after this many consecutive failures, half-opens after `halfOpenAfterMs`. `false` disables. @default { consecutiveFailures: 5, halfOpenAfterMs: 10000 } */
  circuitBreaker?: { consecutiveFailures: number; halfOpenAfterMs: number } | false;
  /** Retries of retryable failures inside one owner run. `false` disables. @default { maxAttempts: 2, initialDelayMs: 100, maxDelayMs: 2000 } */
  retry?: { maxAttempts: number; initialDelayMs?: number; maxDelayMs?: number } | false;
}

/** What a user may set per stage (or as defaults for all stages). Every field is optional. */
export interface StagePolicyInput {
  /** Heartbeat cadence of an owner; at least 500 ms (less is a `FlightConfigurationError`). @default 3000 */
  heartbeatIntervalMs?: number;
  /** A run whose last heartbeat is older than this may be taken over. @default 3 × heartbeatIntervalMs */
  takeoverAfterMs?: number;
  /** Storage TTL of an active flight, renewed by heartbeats. @default 2 × takeoverAfterMs */
  leaseTtlMs?: number;
  /**
   * Longest a run may last. An owner's lease stops renewing past it and the run is EXPIRED; a run without a
   * lease (local mode, hybrid fallback) is abandoned with `E_FLIGHT_RUN_TIMEOUT`. @default 120000
   */
  maxRunMs?: number;
  /**
   * When the supplier reports progress (`ctx.progress()`), the lease stops renewing if no report came
   * for this long. Suppliers that never report are judged by `maxRunMs` alone. @default 30000
   */
  stallTimeoutMs?: number;
  /** How long a success is kept for replay. @default 300000 */
  resultTtlMs?: number;
  /**
   * Serve a result past its fresh time (`resultTtlMs`), RFC 5861 across the cluster. For
   * `whileRevalidateMs` after it went stale, a caller on any node gets it at once (role `stale`) while one
   * refresh runs as a normal owned flight; for `ifErrorMs` after, it is served in place of a failed run's
   * error. A refresh that failed is not tried again for `retryAfterMs` (one refresh per cluster per
   * interval; callers meanwhile get the stale value, or the failure once `ifErrorMs` is over). Needs a
   * coordinator that `keepsStaleCopies` (memory and Redis do); in `local` mode, and while hybrid mode serves
   * in-process, each node serves the copies its own runs kept. A caller that wants a fresh value only passes
   * `fresh: true`.
   * @default { whileRevalidateMs: 0, ifErrorMs: 0, retryAfterMs: 5000 } (never stale)
   */
  stale?: { whileRevalidateMs?: number; ifErrorMs?: number; retryAfterMs?: number };
  /** How long a failure is kept (non-retryable ones are replayed for this long). @default 30000 */
  failureTtlMs?: number;
  /** How long CANCELLED and EXPIRED records are kept. @default 30000 */
  terminalTtlMs?: number;
  /** Node-local L1 replay cache. @default { enabled: true, ttlMs: 30000 } */
  l1?: { enabled?: boolean; ttlMs?: number };
  /**
   * Longest a follower waits for the owner — of another node, or a run of its own node it joined — before
   * `FlightWaitTimeoutError`. @default maxRunMs + takeoverAfterMs
   */
  waitTimeoutMs?: number;
  /** Followers re-check the state this often even without a wake-up (safety net). @default 1000 */
  pollIntervalMs?: number;
  /** Largest encoded result accepted (and largest decoded payload). @default 8 MiB */
  maxResultBytes?: number;
  /** Failure classes after which the next caller may take over instead of replaying the failure. @default ['TIMEOUT', 'OVERLOAD', 'PROVIDER'] */
  retryableFailures?: readonly FailureType[];
  /** Classifies a supplier error; return `undefined` to use the built-in rules. */
  classify?: (error: unknown) => FailureType | undefined;
  /** Resilience around the supplier (timeout, bulkhead, circuit breaker, retry). */
  guard?: GuardPolicy;
  /**
   * Hold the per-session lock around the owner's run (heavy stages), renewed every `ttlMs / 3` while held.
   * Only the run that executes takes it: identical requests follow the run instead of queueing on the lock.
   * @default { enabled: false, ttlMs: 30000, waitMs: 30000 }
   */
  sessionLock?: { enabled?: boolean; ttlMs?: number; waitMs?: number };
  /** How many times one call may re-enter the flight after a takeover or a fenced write. @default 3 */
  maxAttempts?: number;
  /**
   * What a caller does when the stored result fails its checksum, is truncated or inflates past the cap:
   * `rerun` runs the supplier on this node (never returning the damaged value), `error` throws the typed error.
   * @default 'rerun'
   */
  onCorruptResult?: 'rerun' | 'error';
}

/** A stage policy with every default applied. */
export interface StagePolicy {
  stage: string;
  heartbeatIntervalMs: number;
  takeoverAfterMs: number;
  leaseTtlMs: number;
  maxRunMs: number;
  stallTimeoutMs: number;
  resultTtlMs: number;
  /** `enabled`: a window is above 0 (results are kept as stale copies). */
  stale: { enabled: boolean; whileRevalidateMs: number; ifErrorMs: number; retryAfterMs: number };
  failureTtlMs: number;
  terminalTtlMs: number;
  l1: { enabled: boolean; ttlMs: number };
  waitTimeoutMs: number;
  pollIntervalMs: number;
  maxResultBytes: number;
  retryableFailures: readonly FailureType[];
  classify: ((error: unknown) => FailureType | undefined) | undefined;
  guard: {
    timeoutMs: number;
    bulkhead: { limit: number; queue: number } | false;
    circuitBreaker: { consecutiveFailures: number; halfOpenAfterMs: number } | false;
    retry: { maxAttempts: number; initialDelayMs: number; maxDelayMs: number } | false;
  };
  sessionLock: { enabled: boolean; ttlMs: number; waitMs: number };
  maxAttempts: number;
  onCorruptResult: 'rerun' | 'error';
}

export const MIN_HEARTBEAT_INTERVAL_MS = 500;
export const DEFAULT_HEARTBEAT_INTERVAL_MS = 3000;

const STAGE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Validates a stage name: 1–64 characters of `A-Z a-z 0-9 . _ -`, not starting with a symbol. */
export function assertStageName(stage: unknown): asserts stage is string {
  if (typeof stage !== 'string' || !STAGE_PATTERN.test(stage)) {
    throw new FlightValidationError(`invalid stage name ${JSON.stringify(stage)}: use 1-64 of A-Z a-z 0-9 . _ -`, {
      context: { stage: String(stage) },
    });
  }
}

function positive(name: string, value: number, stage: string): number {
  if (!Number.isFinite(value) || value <= 0) {
    throw new FlightValidationError(`stage ${stage}: ${name} must be a positive number, got ${value}`, { context: { stage } });
  }
  return Math.floor(value);
}

const STAGE_OPTIONS: readonly (keyof StagePolicyInput)[] = [
  'heartbeatIntervalMs',
  'takeoverAfterMs',
  'leaseTtlMs',
  'maxRunMs',
  'stallTimeoutMs',
  'resultTtlMs',
  'stale',
  'failureTtlMs',
  'terminalTtlMs',
  'l1',
  'waitTimeoutMs',
  'pollIntervalMs',
  'maxResultBytes',
  'retryableFailures',
  'classify',
  'guard',
  'sessionLock',
  'maxAttempts',
  'onCorruptResult',
];

/** Checks one stage input's option names, nested ones included (`where`: which input, for the message). */
export function assertStageOptions(where: string, input: StagePolicyInput | undefined): void {
  assertKnownOptions(where, input, STAGE_OPTIONS);
  if (!input) return;
  assertKnownOptions(`${where}.l1`, input.l1, ['enabled', 'ttlMs']);
  assertKnownOptions(`${where}.sessionLock`, input.sessionLock, ['enabled', 'ttlMs', 'waitMs']);
  assertKnownOptions(`${where}.stale`, input.stale, ['whileRevalidateMs', 'ifErrorMs', 'retryAfterMs']);
  const guard = input.guard;
  assertKnownOptions(`${where}.guard`, guard, ['timeoutMs', 'bulkhead', 'circuitBreaker', 'retry']);
  if (guard?.bulkhead) assertKnownOptions(`${where}.guard.bulkhead`, guard.bulkhead, ['limit', 'queue']);
  if (guard?.circuitBreaker)
    assertKnownOptions(`${where}.guard.circuitBreaker`, guard.circuitBreaker, ['consecutiveFailures', 'halfOpenAfterMs']);
  if (guard?.retry) assertKnownOptions(`${where}.guard.retry`, guard.retry, ['maxAttempts', 'initialDelayMs', 'maxDelayMs']);
  if (input.onCorruptResult !== undefined && input.onCorruptResult !== 'rerun' && input.onCorruptResult !== 'error') {
    throw new FlightConfigurationError(
      `${where}: onCorruptResult must be 'rerun' or 'error', got ${JSON.stringify(input.onCorruptResult)}`,
      {
        context: { option: 'onCorruptResult' },
      },
    );
  }
}

/** Applies defaults (stage overrides over shared defaults over built-ins) and checks the lease arithmetic. */
export function resolveStagePolicy(stage: string, defaults: StagePolicyInput = {}, override: StagePolicyInput = {}): StagePolicy {
  assertStageName(stage);
  assertStageOptions('defaults', defaults);
  assertStageOptions(`stages.${stage}`, override);
  const input: StagePolicyInput = {
    ...defaults,
    ...override,
    l1: { ...defaults.l1, ...override.l1 },
    guard: { ...defaults.guard, ...override.guard },
    sessionLock: { ...defaults.sessionLock, ...override.sessionLock },
    stale: { ...defaults.stale, ...override.stale },
  };
  const heartbeatIntervalMs = positive('heartbeatIntervalMs', input.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS, stage);
  if (heartbeatIntervalMs < MIN_HEARTBEAT_INTERVAL_MS) {
    throw new FlightConfigurationError(
      `stage ${stage}: heartbeatIntervalMs must be at least ${MIN_HEARTBEAT_INTERVAL_MS} ms, got ${heartbeatIntervalMs} (a lease renewed faster than that is load on Redis, not safety: shorten takeoverAfterMs instead)`,
      { context: { stage, option: 'heartbeatIntervalMs', fix: MIN_HEARTBEAT_INTERVAL_MS } },
    );
  }
  const takeoverAfterMs = positive('takeoverAfterMs', input.takeoverAfterMs ?? 3 * heartbeatIntervalMs, stage);
  if (takeoverAfterMs <= heartbeatIntervalMs) {
    throw new FlightValidationError(
      `stage ${stage}: takeoverAfterMs (${takeoverAfterMs}) must exceed heartbeatIntervalMs (${heartbeatIntervalMs})`,
      { context: { stage } },
    );
  }
  const leaseTtlMs = positive('leaseTtlMs', input.leaseTtlMs ?? 2 * takeoverAfterMs, stage);
  if (leaseTtlMs <= takeoverAfterMs) {
    throw new FlightValidationError(`stage ${stage}: leaseTtlMs (${leaseTtlMs}) must exceed takeoverAfterMs (${takeoverAfterMs})`, {
      context: { stage },
    });
  }
  const maxRunMs = positive('maxRunMs', input.maxRunMs ?? 120_000, stage);
  const guard = input.guard ?? {};
  const bulkhead = guard.bulkhead === undefined ? { limit: 16, queue: 64 } : guard.bulkhead;
  const breaker = guard.circuitBreaker === undefined ? { consecutiveFailures: 5, halfOpenAfterMs: 10_000 } : guard.circuitBreaker;
  const retry = guard.retry === undefined ? { maxAttempts: 2 } : guard.retry;
  return {
    stage,
    heartbeatIntervalMs,
    takeoverAfterMs,
    leaseTtlMs,
    maxRunMs,
    stallTimeoutMs: positive('stallTimeoutMs', input.stallTimeoutMs ?? 30_000, stage),
    resultTtlMs: positive('resultTtlMs', input.resultTtlMs ?? 300_000, stage),
    stale: stalePolicy(input.stale, stage),
    failureTtlMs: positive('failureTtlMs', input.failureTtlMs ?? 30_000, stage),
    terminalTtlMs: positive('terminalTtlMs', input.terminalTtlMs ?? 30_000, stage),
    l1: { enabled: input.l1?.enabled ?? true, ttlMs: positive('l1.ttlMs', input.l1?.ttlMs ?? 30_000, stage) },
    waitTimeoutMs: positive('waitTimeoutMs', input.waitTimeoutMs ?? maxRunMs + takeoverAfterMs, stage),
    pollIntervalMs: positive('pollIntervalMs', input.pollIntervalMs ?? 1000, stage),
    maxResultBytes: positive('maxResultBytes', input.maxResultBytes ?? 8 * 1024 * 1024, stage),
    retryableFailures: input.retryableFailures ?? ['TIMEOUT', 'OVERLOAD', 'PROVIDER'],
    classify: input.classify,
    guard: {
      timeoutMs: guard.timeoutMs === 0 ? 0 : positive('guard.timeoutMs', guard.timeoutMs ?? 30_000, stage),
      bulkhead: bulkhead && { limit: positive('guard.bulkhead.limit', bulkhead.limit, stage), queue: Math.max(0, bulkhead.queue ?? 64) },
      circuitBreaker: breaker && {
        consecutiveFailures: positive('guard.circuitBreaker.consecutiveFailures', breaker.consecutiveFailures, stage),
        halfOpenAfterMs: positive('guard.circuitBreaker.halfOpenAfterMs', breaker.halfOpenAfterMs, stage),
      },
      retry: retry && {
        maxAttempts: positive('guard.retry.maxAttempts', retry.maxAttempts, stage),
        initialDelayMs: Math.max(0, retry.initialDelayMs ?? 100),
        maxDelayMs: Math.max(0, retry.maxDelayMs ?? 2000),
      },
    },
    sessionLock: {
      enabled: input.sessionLock?.enabled ?? false,
      ttlMs: positive('sessionLock.ttlMs', input.sessionLock?.ttlMs ?? 30_000, stage),
      waitMs: Math.max(0, input.sessionLock?.waitMs ?? 30_000),
    },
    maxAttempts: positive('maxAttempts', input.maxAttempts ?? 3, stage),
    onCorruptResult: input.onCorruptResult === 'error' ? 'error' : 'rerun',
  };
}

function nonNegative(name: string, value: number, stage: string): number {
  if (!Number.isFinite(value) || value < 0) {
    throw new FlightValidationError(`stage ${stage}: ${name} must be a number of 0 or more, got ${value}`, { context: { stage } });
  }
  return Math.floor(value);
}

function stalePolicy(input: StagePolicyInput['stale'], stage: string): StagePolicy['stale'] {
  const whileRevalidateMs = nonNegative('stale.whileRevalidateMs', input?.whileRevalidateMs ?? 0, stage);
  const ifErrorMs = nonNegative('stale.ifErrorMs', input?.ifErrorMs ?? 0, stage);
  const retryAfterMs = positive('stale.retryAfterMs', input?.retryAfterMs ?? 5000, stage);
  return { enabled: whileRevalidateMs > 0 || ifErrorMs > 0, whileRevalidateMs, ifErrorMs, retryAfterMs };
}

/** The lease terms a coordinator needs, taken from a policy. */
export function leaseTerms(policy: StagePolicy) {
  return { takeoverAfterMs: policy.takeoverAfterMs, leaseTtlMs: policy.leaseTtlMs, maxRunMs: policy.maxRunMs };
}
