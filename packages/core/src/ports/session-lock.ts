/** A held session lock. */
export interface SessionLockHandle {
  readonly sessionId: string;
  /** Random token proving this holder; release and renew check it. */
  readonly token: string;
  /** Extends the lock by `ttlMs`; rejects with `FlightLockLostError` when it is no longer held. */
  renew(ttlMs?: number): Promise<void>;
  /** Releases the lock if still held by this token; resolves `false` when it was already lost. */
  release(): Promise<boolean>;
}

/**
 * A per-session mutex for heavy stages, so one session
 * never starts the same heavy pre-work twice at once. Token-checked: only the holder releases or renews.
 */
export interface SessionLock {
  /**
   * Takes the lock for `sessionId`, waiting up to `waitMs` (0 = try once).
   * Rejects with `FlightLockTimeoutError` when it stays held by someone else.
   */
  acquire(sessionId: string, options: { ttlMs: number; waitMs: number; signal?: AbortSignal }): Promise<SessionLockHandle>;
}
