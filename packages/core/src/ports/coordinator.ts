import type {
  AcquireInput,
  AcquireReply,
  CancelInput,
  CancelReply,
  CompleteInput,
  ExpireReply,
  Fence,
  ForgetReply,
  FailureRecord,
  FlightMeta,
  FlightRef,
  LeaseTerms,
  StaleCopy,
  StoredResult,
  TerminalEvent,
  WriteReply,
} from '../state/types.js';

/** What `FlightCoordinator.listenForgets` calls. Never throws into the coordinator. */
export interface ForgetListener {
  /** The flight was forgotten (on any node, this one included). */
  forgotten(): void;
  /**
   * `true`: from now on every forget of the flight is heard (the listening was confirmed, or confirmed
   * again after a break). `false`: forgets may be missed from now on (the connection broke), until the
   * next `true`.
   */
  covered(heard: boolean): void;
}

/**
 * Where flights are coordinated across processes (Redis) or inside one (memory).
 *
 * Every method implements the pure transition of the same name in `state/transitions.ts`, atomically.
 * Adapters MUST:
 * - take time from one clock shared by all nodes (Redis: the server's `TIME`), never the caller's;
 * - check ownerId, ownerToken and epoch inside every owner write and answer `FENCED` to anyone else;
 * - make `complete` store the result, move to SUCCEEDED and publish the terminal event in one step;
 * - give every stored key a TTL;
 * - settle every returned promise by a deadline, rejecting with `FlightCoordinationError` when the
 *   backing store fails or does not answer (hybrid mode falls back on exactly that error).
 */
export interface FlightCoordinator {
  /** Join the flight or become its owner. Returns the outcome, the metadata and, for REPLAY_SUCCESS, the stored result. */
  acquire(input: AcquireInput): Promise<AcquireReply>;
  /** PENDING → RUNNING for the fenced owner; renews the lease. */
  markRunning(fence: Fence, lease: LeaseTerms): Promise<WriteReply>;
  /** Renews the fenced owner's lease; refused past the run's deadline (the run becomes EXPIRED). */
  heartbeat(fence: Fence, lease: LeaseTerms): Promise<WriteReply>;
  /**
   * Stores `result`, moves to SUCCEEDED and publishes the terminal event, atomically. `result` is a
   * `Uint8Array` only when `storesBytes` is true. With `input.stale` (only sent to a coordinator that
   * `keepsStaleCopies`), the same step replaces or drops the flight's stale copy.
   */
  complete(fence: Fence, input: CompleteInput): Promise<WriteReply>;
  /** Moves to FAILED with the failure record and publishes the terminal event. */
  fail(fence: Fence, input: { failure: FailureRecord; ttlMs: number }): Promise<WriteReply>;
  /**
   * Cancels an active flight cluster-wide and publishes the terminal event. With `input.epoch`, only the
   * run of that epoch (another active run answers `EPOCH_MISMATCH`, untouched).
   */
  cancel(ref: FlightRef, input: CancelInput): Promise<CancelReply>;
  /** Marks an active flight that is past its deadline EXPIRED and publishes the terminal event. */
  expire(ref: FlightRef, input: { ttlMs: number }): Promise<ExpireReply>;
  /**
   * Forgets the flight cluster-wide (Go's `singleflight.Forget`; transitions.ts `forget`). After it
   * resolves, the next `acquire` of any caller that did not join the current run starts a new run (new
   * epoch) instead of joining or replaying it; the forgotten run's owner is answered `FORGOTTEN` (not
   * `FENCED`) by heartbeat, complete and fail, so it finishes for its own callers while nothing it writes
   * is stored. On a SUCCEEDED or FAILED record this drops the stored outcome. `NOT_FOUND` when there is no
   * live record.
   */
  forget(ref: FlightRef): Promise<ForgetReply>;
  /**
   * Resolves with the first terminal event of `ref` at or after `epoch`, or `null` when `timeoutMs`
   * passes or `signal` aborts. Never rejects: a broken notification channel only delays the waiter
   * until its timeout (callers poll the state as a safety net). `handle`: that of the `FOLLOWER_WAIT`
   * reply followed (`AcquireReply.handle`).
   */
  waitForTerminal(
    ref: FlightRef,
    options: { epoch: number; timeoutMs: number; signal?: AbortSignal; handle?: unknown },
  ): Promise<TerminalEvent | null>;
  /**
   * Optional: tells this node about every forget of `ref` made on any node, so it can drop its L1 copy
   * (see `ForgetListener`). A coordinator that has it must reach only the nodes that listen on the flight
   * (no broadcast) and say when it cannot hear (its connection broke) and when it hears again. Returns
   * the function that stops listening. Without it, L1 copies of other nodes live out their TTL.
   */
  listenForgets?(ref: FlightRef, listener: ForgetListener): () => void;
  /**
   * Optional: how many other nodes listen for the outcome of `ref` now (their followers and stream readers
   * wait on it; a node listening for forgets may count too), or `undefined` when it cannot tell. Read before
   * a run every caller left is cancelled (`ExecuteOptions.cancelWhenAbandoned`): only `0` cancels it.
   */
  waitingNodes?(ref: FlightRef): Promise<number | undefined>;
  /** Releases connections and timers owned by the coordinator (not the user's own client). */
  close(): Promise<void>;
  /**
   * The coordinator keeps each flight's stale copy (`StaleCopy`, transitions.ts): `complete` with `stale`
   * windows writes it, `forget` drops it, an `acceptStale` acquire offers it — stale-while-revalidate and
   * stale-if-error across the cluster. Core refuses stale windows on a coordinator without it. @default false
   */
  readonly keepsStaleCopies?: boolean;
  /**
   * The coordinator stores a `Uint8Array` result byte for byte and gives it back as a `Uint8Array` (text
   * results stay strings): the codec may then store a compressed body without base64. @default false
   */
  readonly storesBytes?: boolean;
}

/**
 * A coordinator whose stored state tests can read back: the conformance suite, the model comparison and
 * fault tests check what a transition stored through it. Core never reads a flight this way. Implemented
 * by the memory and Redis coordinators; exported by `@flight/core/testing` (and, as a type, by the main
 * entry, so the adapters' public types need not import the testing entry).
 */
export interface InspectableCoordinator extends FlightCoordinator {
  /** Reads the metadata, or null when there is no live record. */
  readMeta(ref: FlightRef): Promise<FlightMeta | null>;
  /** Reads the stored result of a SUCCEEDED flight, or null (also for a forgotten one). */
  readResult(ref: FlightRef): Promise<StoredResult | null>;
  /** Reads the flight's stale copy while it may be served, or null (coordinators that `keepsStaleCopies`). */
  readStale?(ref: FlightRef): Promise<StaleCopy | null>;
}
