/**
 * The persisted shape of a flight: statuses, outcomes, the metadata record and the
 * inputs of every transition. These types are shared by the pure transition
 * functions, every coordinator and the Lua scripts' replies.
 */

/** Every status a flight's metadata can hold. */
export const FLIGHT_STATUSES = ['PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED', 'EXPIRED'] as const;
export type FlightStatus = (typeof FLIGHT_STATUSES)[number];

/** True for the statuses in which an owner holds the flight (PENDING, RUNNING). */
export function isActive(status: FlightStatus): boolean {
  return status === 'PENDING' || status === 'RUNNING';
}

/** What `acquire` decided for the caller. */
export const ACQUIRE_OUTCOMES = ['OWNER_NEW', 'OWNER_TAKEOVER', 'FOLLOWER_WAIT', 'REPLAY_SUCCESS', 'REPLAY_FAILURE'] as const;
export type AcquireOutcome = (typeof ACQUIRE_OUTCOMES)[number];

/** Failure classes of a run (see failure/classify.ts), plus CANCELLED for flights cancelled cluster-wide. */
export const FAILURE_TYPES = ['TIMEOUT', 'OVERLOAD', 'PROVIDER', 'VALIDATION', 'UNEXPECTED', 'CANCELLED'] as const;
export type FailureType = (typeof FAILURE_TYPES)[number];

/** Identifies one flight: the stage and the request key inside it. */
export interface FlightRef {
  stage: string;
  key: string;
}

/** The metadata record of a flight: its status, owner, lease and outcome. Times are epoch milliseconds. */
export interface FlightMeta {
  status: FlightStatus;
  stage: string;
  requestKey: string;
  sessionId: string;
  ownerId: string;
  ownerToken: string;
  /** Fencing epoch: grows on every new owner of this key and never repeats, even after the record is lost. */
  epoch: number;
  /** How many times ownership was taken over inside this record. */
  takeovers: number;
  /** Followers that joined the current epoch (one per joining caller's node), counted cluster-wide. */
  followers: number;
  createdAt: number;
  updatedAt: number;
  heartbeatAt: number;
  /** When the record expires (the storage TTL ends). */
  expireAt: number;
  /** The latest time the current run may still be renewed; past it the run is EXPIRED. */
  deadlineAt: number;
  retryable: boolean;
  errorType: FailureType | '';
  errorCode: string;
  errorMessage: string;
  /** Where the result is stored (set once SUCCEEDED). */
  resultRef: string;
  /**
   * W3C `traceparent` of the current owner's span, as the owner passed it to `acquire`. Followers and
   * replays link their spans to it. Absent when the owner had no recording span, or when the coordinator
   * does not store it (optional for coordinators).
   */
  traceparent?: string | undefined;
  /**
   * A public, random id of this epoch's run (see `flightNonce`): terminal notices carry it, so a waiter
   * accepts only the notice of the very run it joined. It reveals nothing of the owner token.
   */
  nonce: string;
  /**
   * The epoch of the latest run `forget` was called on (0 when none). A record whose `epoch` equals it is
   * forgotten: no new caller joins it or replays it, and that run's completion is never stored. Kept across
   * takeovers so the forgotten run's owner is told `FORGOTTEN` (keep running for your own callers) instead of
   * `FENCED`.
   */
  forgottenEpoch: number;
}

/**
 * An encoded result as a coordinator stores it: text, or bytes where the coordinator stores bytes as they
 * are (`FlightCoordinator.storesBytes`). A coordinator gives back exactly what was stored.
 */
export type StoredResult = string | Uint8Array;

/** A flight as stored: its metadata and, once SUCCEEDED, the encoded result. */
export interface FlightRecord {
  meta: FlightMeta;
  result?: StoredResult | undefined;
}

/** Proves who is writing: owner writes are refused unless all three match the record. */
export interface Fence extends FlightRef {
  ownerId: string;
  ownerToken: string;
  epoch: number;
  /** The `handle` of the acquire reply that gave this run its lease (see `AcquireReply.handle`). */
  handle?: unknown;
}

/** Lease arithmetic, taken from the stage policy and passed with every call. */
export interface LeaseTerms {
  /** A run whose heartbeat is older than this may be taken over. */
  takeoverAfterMs: number;
  /** Storage TTL of an active flight, renewed by each heartbeat. Larger than `takeoverAfterMs`. */
  leaseTtlMs: number;
  /** Longest a run may last from its acquisition; past it, heartbeats are refused and the run is EXPIRED. */
  maxRunMs: number;
}

export interface AcquireInput extends FlightRef, LeaseTerms {
  sessionId?: string | undefined;
  ownerId: string;
  /** A fresh random token per attempt; repeating an acquire with the same token is idempotent. */
  ownerToken: string;
  /** The epoch this caller was following, if any: a CANCELLED flight of that epoch is replayed to it. */
  joinEpoch?: number | undefined;
  /**
   * W3C `traceparent` of the caller's span. Stored with the record only when this call creates a new
   * owner record (OWNER_NEW / OWNER_TAKEOVER), and returned in `FlightMeta.traceparent`.
   */
  traceparent?: string | undefined;
  /**
   * The caller runs at once: a new owner record is created RUNNING (one write less per owner flight).
   * Leave it unset for an owner that must wait first (for its session lock): the record is created
   * PENDING and `markRunning` moves it on. @default false
   */
  startRunning?: boolean | undefined;
  /**
   * The shortest time any record of this flight is kept (the stage's shortest of lease, result, failure and
   * terminal TTLs). A coordinator that stamps new records with an estimate of its store's clock (the Redis
   * fast acquire) needs it to keep epochs growing; others ignore it. @default unknown
   */
  minRecordTtlMs?: number | undefined;
  /**
   * Offer this flight's stale copy with the reply (`AcquireReply.stale`), when it has one that may still be
   * served (see `StaleCopy`). Only coordinators that keep stale copies (`FlightCoordinator.keepsStaleCopies`)
   * read it. @default false
   */
  acceptStale?: boolean | undefined;
  /**
   * A caller that followed a run (`joinEpoch`) gets that run's failure even when it is retryable (replayed,
   * as a cancelled run is), instead of taking the flight over: for work whose failure concerns its own run
   * and its callers (`ExecuteOptions.keepFailures: false`). Callers that did not follow it still take over.
   * @default false
   */
  joinFailures?: boolean | undefined;
}

/**
 * How long past its fresh time a stored success may still be served (RFC 5861), fixed when it is stored:
 * `whileRevalidateMs` at once while one refresh runs, `ifErrorMs` in place of a failed refresh's error.
 */
export interface StaleWindows {
  whileRevalidateMs: number;
  ifErrorMs: number;
}

/**
 * The last stored success of a flight, kept past its fresh time while one of its stale windows lasts
 * (written by `complete` with `stale` windows, dropped by `forget` and by a `complete` without windows). It
 * lives apart from the record: a new run replaces the record, never the copy, until that run completes.
 */
export interface StaleCopy {
  result: StoredResult;
  /** The epoch of the run that stored it. */
  epoch: number;
  /** When it was stored (store clock, ms). */
  storedAt: number;
  /** When its fresh time ended (the record's `expireAt` at `complete`). */
  freshUntil: number;
  /** Until when it may be served while a refresh runs. */
  revalidateUntil: number;
  /** Until when it may be served in place of a failure. */
  errorUntil: number;
}

/** A stale copy as `acquire` offers it: its times relative to the store's clock at the reply. */
export interface StaleOffer {
  result: StoredResult;
  epoch: number;
  /** Since when it was stored, ms. */
  ageMs: number;
  /** How much longer it may be served while a refresh runs, ms (≤ 0: no longer). */
  revalidateForMs: number;
  /** How much longer it may be served in place of a failure, ms (≤ 0: no longer). */
  errorForMs: number;
}

/** Input of `cancel`. */
export interface CancelInput {
  reason: string;
  /** How long the CANCELLED record is kept (replayed to the run's followers). */
  ttlMs: number;
  /**
   * Cancel only this epoch's run: a delayed cancel never cancels a newer run of the same key.
   * @default undefined (whatever run is active)
   */
  epoch?: number | undefined;
}

export interface FailureRecord {
  type: FailureType;
  code: string;
  message: string;
  retryable: boolean;
}

/** Reply of `acquire`. `result` is present for REPLAY_SUCCESS. */
export interface AcquireReply {
  outcome: AcquireOutcome;
  meta: FlightMeta;
  result?: StoredResult | undefined;
  /**
   * For REPLAY_SUCCESS: how long the stored result still lives, in ms by the store's own clock (an L1 copy
   * of it lives no longer). Optional: without it core counts `meta.expireAt` against its own clock.
   */
  storedForMs?: number | undefined;
  /**
   * Opaque to core: given back unchanged to the same coordinator with the calls that follow this reply —
   * as `Fence.handle` in the owner's writes of this run and as `handle` in the follower's
   * `waitForTerminal`. A coordinator may keep what it derived from the ref there (the Redis coordinator:
   * the flight's hashed key and channel, so one call hashes them once) but must work without it.
   */
  handle?: unknown;
  /**
   * The flight's stale copy, for an `acceptStale` acquire whose outcome is not REPLAY_SUCCESS, while the
   * copy may still be served in one of its windows (see `StaleCopy`). Core decides what to do with it.
   */
  stale?: StaleOffer | undefined;
  /**
   * For OWNER_NEW and OWNER_TAKEOVER: how long before this reply was read (ms) the coordinator sent the
   * request that last gave or renewed the lease — the acquire itself, or a renewal of its own (an acquire
   * retried until replicas acknowledged it, or confirmed after its reply came back late). Optional: without
   * it core counts from when it asked. Core renews a lease older than a heartbeat interval before the
   * supplier runs (it may have lapsed while this process stood still).
   */
  leaseSentAgoMs?: number | undefined;
}

/** Input of `complete`. */
export interface CompleteInput {
  result: StoredResult;
  resultTtlMs: number;
  /**
   * Keep the result as the flight's stale copy for these windows past `resultTtlMs` (both 0: drop the
   * copy). Absent: the copy is left as it is (a stage that never keeps stale copies). @default undefined
   */
  stale?: StaleWindows | undefined;
}

/**
 * Reply of an owner write: accepted, or refused because the writer is no longer the owner (`FENCED`), or
 * because its run was forgotten (`FORGOTTEN`: nothing is stored for it, but its own callers may still be
 * given its value; a completion of a forgotten run still publishes its terminal notice for its followers).
 */
export type WriteReply =
  { ok: true; meta: FlightMeta } | { ok: false; code: 'FENCED' | 'FORGOTTEN'; status: FlightStatus | null; epoch: number | null };

/** `NOT_FOUND`: no live record of the flight (nothing to forget). */
export type ForgetReply = { ok: true; meta: FlightMeta } | { ok: false; code: 'NOT_FOUND'; status: null };

/** `EPOCH_MISMATCH`: a run of another epoch than the one asked for is active; it was left alone. */
export type CancelReply =
  { ok: true; meta: FlightMeta } | { ok: false; code: 'NOT_ACTIVE' | 'EPOCH_MISMATCH'; status: FlightStatus | null };

export type ExpireReply = { ok: true; meta: FlightMeta } | { ok: false; code: 'NOT_ACTIVE' | 'NOT_DUE'; status: FlightStatus | null };

/** Published when a flight reaches a terminal status. */
export interface TerminalEvent extends FlightRef {
  status: FlightStatus;
  epoch: number;
  /**
   * The encoded result of a SUCCEEDED flight, when the coordinator carried it with the event (small
   * results only; see each coordinator's `inlineResultBytes`). Absent otherwise: read it with `acquire`.
   * It is the same string `complete` stored, and readers verify it with the codec like a stored result.
   */
  result?: string | undefined;
}
