/** What callers and suppliers of `SingleFlight.execute` see. */
import type { FlightRole } from '../events/types.js';

/** What the supplier receives. */
export interface FlightContext {
  /**
   * Aborts when the guard's timeout fires, the lease is lost, the flight is cancelled, or a run without a
   * lease (local mode, hybrid fallback) passes `maxRunMs`. Created on first read: a supplier that never
   * reads it costs no AbortController.
   */
  readonly signal: AbortSignal;
  readonly stage: string;
  readonly key: string;
  readonly role: 'owner' | 'local';
  /** The fencing epoch of this run (distributed runs only). */
  readonly epoch: number | undefined;
  /**
   * The identity of this run: its epoch when it holds a lease, else a node-local id drawn for the run
   * (local mode, hybrid fallback; never an epoch's range), so two runs are never taken for one.
   */
  readonly run: number;
  /** 1 for the first run of this call, more after a takeover or a fenced write. */
  readonly attempt: number;
  /**
   * This run takes over the flight's previous run (its owner died, stalled or failed retryably) rather than
   * starting the flight: what that run produced, its callers may have received part of.
   */
  readonly takeover: boolean;
  /** Reports progress: keeps the lease renewing under the stage's stall rule. */
  progress(): void;
}

export type Supplier<T> = (context: FlightContext) => Promise<T> | T;

export interface ExecuteOptions {
  /**
   * Detaches this caller only: it rejects with `FlightAbortedError`, the flight goes on for everyone else.
   * A signal that is already aborted rejects at once and starts no flight.
   */
  signal?: AbortSignal;
  /** Recorded in the flight's metadata, and the session locked by heavy stages. */
  sessionId?: string;
  /**
   * Hybrid mode only: whether this call may run in-process when the flight cannot be coordinated
   * cluster-wide. `false`: a coordination failure (or the cooldown after one) is thrown as
   * `FlightCoordinationError` and the supplier never runs — for work that must not run twice across
   * the cluster, such as an unsafe request under an Idempotency-Key. Ignored in other modes.
   * @default true
   */
  localFallback?: boolean;
  /**
   * This call's run must never be re-run automatically — for work with side effects, such as a handler
   * under an Idempotency-Key. When this call owns the run: the stage's guard does not retry the supplier,
   * every failure of the run (a guard or run TIMEOUT and a lost lease included) is recorded as
   * non-retryable, so later callers of the key get it replayed (for `failureTtlMs`) instead of running the
   * supplier again, and a call whose run was fenced does not take the flight over for a second run. What
   * it cannot prevent: a new run after the owner's process died (its lease lapses and the next caller
   * takes over), or after the failure's TTL. Other callers that join the run get its outcome either way.
   * @default false
   */
  atMostOnce?: boolean;
  /**
   * `false`: a failure of this call's run concerns that run only — for a supplier whose failure says
   * nothing about the next run, such as an HTTP response that may not be shared. When this call owns the
   * run, the stage's guard does not retry the supplier and the failure is recorded retryable whatever its
   * type, so the next caller of the key starts a new run instead of getting it replayed for
   * `failureTtlMs`. Callers that joined the run get the failure: on its node, and on other nodes those
   * that pass `keepFailures: false` too (they do not take the flight over to run it once more each, one
   * node after another). `atMostOnce` wins when both are set.
   * @default true
   */
  keepFailures?: boolean;
  /**
   * How long later callers may reuse this call's run's result, when less than the stage's `resultTtlMs`:
   * milliseconds, or a function of the value saying how long, from now, it may still be reused (an HTTP
   * response's freshness, for example). Read when this call's run stores its result (kept that long: at
   * least 1 ms, at most `resultTtlMs`) and whenever a copy of the value goes into L1 (it never lives
   * longer there). Callers that joined the run get its value whatever this says. A function returns
   * `undefined` for the stage's `resultTtlMs`; one that throws or returns anything else than a number
   * (`NaN` included) counts as 1 ms (the value is not reused).
   * @default the stage's `resultTtlMs`
   */
  resultTtlMs?: number | ((value: unknown) => number | undefined);
  /**
   * `true`: the run this call starts on its node is cancelled cluster-wide once nobody wants its outcome —
   * every caller of it on this node has left (each by its `signal`, or a joiner's wait timing out) and the
   * coordinator tells that no other node waits for it (`FlightCoordinator.waitingNodes`) — for work worth
   * stopping then, such as a model call whose only reader went away. It is cancelled only while this node
   * owns the run; a coordinator that cannot tell (none, or without `waitingNodes`) keeps the run, as
   * does a node whose callers were followers. A caller without a signal never leaves. @default false (the
   * run finishes and its outcome is stored for later callers)
   */
  cancelWhenAbandoned?: boolean;
  /**
   * `true`: this caller never gets a stale value (role `stale`) — it joins or runs the refresh and waits
   * for it, on a stage with `stale` windows. @default false
   */
  fresh?: boolean;
  /**
   * The stale windows of this call's run's value (see the stage option `stale`), in place of the stage's:
   * a function of the value, read when the run stores it (an HTTP response's `stale-while-revalidate` and
   * `stale-if-error`, for example). `undefined` from it keeps the stage's windows; what it leaves out is 0.
   * A call that passes it may be given stale values even on a stage without windows. @default the stage's
   */
  staleFor?: (value: unknown) => { whileRevalidateMs?: number; ifErrorMs?: number } | undefined;
  /**
   * Who runs the refresh of a stale value when this call is given its lease: `'background'` — the refresh
   * runs detached and this call gets the stale value at once, like every other caller; `'caller'` — this
   * call runs the refresh and waits for it (a supplier tied to its caller, as an HTTP handler is to its
   * request), every other caller still getting the stale value at once. @default 'background'
   */
  staleRefresh?: 'background' | 'caller';
  /**
   * Keep this call's run's failure, when the supplier threw `error`, for the milliseconds this returns (not
   * retryable, whatever `keepFailures` says): later callers of the key get it at once instead of waiting
   * behind a new run that would only fail the same way — for an outcome known to be unshareable for a while,
   * such as an HTTP response that may not be replayed (Varnish's hit-for-pass). `undefined` (or a hook that
   * throws) keeps the failure as usual. @default undefined
   */
  holdFailure?: (error: unknown) => number | undefined;
  /**
   * `true`: when this call's run succeeds, the run's callers of this node get its value as soon as the
   * supplier returns, and the value is stored for later callers (and for callers on other nodes, who wait
   * for it as always) in the background, written once they have resumed — one round trip to the coordinator
   * sooner, for work whose every answer is as good as another's, such as a model call. The price: should
   * the store be refused (a newer owner took the flight over after this run's lease lapsed) or fail (the
   * coordinator unreachable), these callers keep this run's value instead of moving on to the newer run's.
   * `close()` waits for stores under way. Ignored in local mode and in-process fallback (nothing is
   * stored). @default false (the value is stored before anyone gets it)
   */
  storeInBackground?: boolean;
}

/** `ExecuteOptions` plus what `executeStream` passes to its `execute` calls (not part of the public API). */
export interface StreamExecuteOptions extends ExecuteOptions {
  /**
   * When the followed run last made progress (a chunk arrived; clock ms). A follower then waits for the
   * run's outcome as long as it progresses: `waitTimeoutMs` counts from the later of its wait's start and
   * this, and a caller joining another caller of its node waits for that caller's call without a limit
   * of its own.
   */
  progressedAt?: () => number;
  /**
   * The cap of the stored result of this call's flight, in bytes, when not the stage's `maxResultBytes`: a
   * streamed flight stores its chunk list, which adds a bracket and a comma per chunk to the chunks' own cap.
   */
  maxResultBytes?: number;
}

/** What a caller gets. */
export interface FlightResult<T> {
  value: T;
  /**
   * How the value was obtained: ran the supplier (`owner`; `local` in local mode or fallback, also for
   * callers that joined a local run), joined a run of this or another node (`follower`), a stored result
   * (`replay`), the node's L1 cache (`l1`), or a stored result past its fresh time (`stale`: while one
   * refresh runs, or in place of a failed run's error; see the stage option `stale`).
   */
  role: FlightRole;
  /** For a `stale` value: how long ago it was stored, in ms. */
  ageMs?: number | undefined;
  /** True when the value was produced once for several callers (or came from a stored result). */
  shared: boolean;
  stage: string;
  key: string;
  /** Fencing epoch of the run that produced the value (distributed modes). */
  epoch?: number | undefined;
}
