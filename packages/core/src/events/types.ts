import type { FailureType } from '../state/types.js';

/** How a caller got its value. */
export type FlightRole = 'owner' | 'follower' | 'replay' | 'l1' | 'local' | 'stale';

interface Base {
  stage: string;
  key: string;
}

/** Lifecycle events of `SingleFlight`, for logs, metrics and dashboards. */
export interface FlightEventMap {
  /** This node became the owner of an epoch (new or by takeover). */
  owner: Base & { epoch: number; takeover: boolean };
  /** Another owner's run was taken over (dead, stuck, expired or retryable failure). */
  takeover: Base & { epoch: number; previousEpoch: number; previousStatus: string };
  /** This node is waiting for another node's owner. */
  follower: Base & { epoch: number; ownerId: string };
  /** A stored success or non-retryable failure was replayed. */
  replay: Base & { outcome: 'success' | 'failure' };
  /** A stored result failed verification (corrupt, truncated, or over the cap); it was not returned. */
  corrupt: Base & { error: string; action: 'rerun' | 'error' };
  /** Served from the node-local L1 replay cache. */
  l1: Base;
  /**
   * A stored result past its fresh time was served (see the stage option `stale`): while a refresh runs
   * (`revalidating`), or in place of a failed run's error (`error`). `epoch`: the run that stored it.
   */
  stale: Base & { epoch: number; ageMs: number; reason: 'revalidating' | 'error' };
  /**
   * A refresh of a stale value failed: callers get the stale value until its `stale.ifErrorMs` ends, and no
   * refresh runs again for `stale.retryAfterMs`. Emitted by the node that ran the refresh.
   */
  'refresh-failed': Base & { epoch: number; errorType: FailureType; errorCode: string; message: string };
  /**
   * A forget of this flight reached this node through the coordinator (made here or on another node): its
   * L1 copy and in-process run were dropped. Only with a coordinator that has `listenForgets`, for flights
   * this node keeps an L1 copy of.
   */
  forgotten: Base;
  /** The supplier is about to run on this node (an upstream call). */
  run: Base & { role: FlightRole; attempt: number };
  /** An owner write was refused: a newer epoch holds the flight. */
  fenced: Base & { epoch: number; operation: string };
  /** The owner lost its lease; its AbortSignal was aborted. */
  'lease-lost': Base & { epoch: number; reason: LeaseLossReason };
  /** Coordination failed and hybrid mode used the in-process single-flight. */
  fallback: Base & { error: string };
  /** Coordination failed in distributed mode (the caller got a FlightCoordinationError). */
  'coordination-error': Base & { error: string };
  /** This node's run was stored; `followers` callers' nodes across the cluster had joined it while it ran. */
  completed: Base & { epoch: number; followers: number };
  /** A follower finished waiting. */
  waited: Base & { waitedMs: number; woken: 'event' | 'poll' | 'timeout' };
  /** A caller's call settled. */
  settled: Base & {
    role: FlightRole | 'none';
    shared: boolean;
    ok: boolean;
    durationMs: number;
    errorType?: FailureType | undefined;
    errorCode?: string | undefined;
  };
}

export type FlightEventName = keyof FlightEventMap;

/**
 * Why an owner's lease ended. `forgotten` (the run was forgotten cluster-wide) is handled by the owner
 * itself: it keeps running for its own callers and emits no `lease-lost`.
 */
export type LeaseLossReason = 'fenced' | 'expired' | 'renewal-failed' | 'stalled' | 'max-run-time' | 'cancelled' | 'forgotten';
