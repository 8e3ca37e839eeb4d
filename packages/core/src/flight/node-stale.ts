/**
 * Stale values per node: local mode, and hybrid mode while it serves in-process. The node's own copies
 * (`NodeStaleCopies`) are served as the coordinator's are in distributed mode — at once while one refresh
 * (per node) runs, or in place of a failed run's error — and a failed refresh is not tried again on this
 * node for the stage's `stale.retryAfterMs`.
 */
import { FlightExecutionError } from '../errors.js';
import { toFailureRecord } from '../failure/classify.js';
import { flightId } from '../keys/key-builder.js';
import type { FailureType } from '../state/types.js';
import type { FlightCall, Outcome } from './flight-call.js';
import type { FlightRuntime } from './flight-runtime.js';
import { runLocalOnce } from './local-run.js';
import { refreshHere, staleOutcome } from './stale-values.js';

/**
 * The local run of `call`, or a stale value of this node while one refresh runs; a run that fails is
 * answered with a stale value still in its error window.
 */
export function runLocal(runtime: FlightRuntime, call: FlightCall): Promise<Outcome> {
  return call.acceptsStale ? runLocalOrStale(runtime, call) : runLocalOnce(runtime, call);
}

async function runLocalOrStale(runtime: FlightRuntime, call: FlightCall): Promise<Outcome> {
  const id = flightId(call.ref);
  const now = runtime.options.clock.now();
  const copy = runtime.copies.staleCopy(id, now);
  if (!copy) return runLocalOnce(runtime, call);
  call.offer = {
    since: call.since,
    offer: {
      result: '',
      epoch: copy.epoch ?? 0,
      ageMs: now - copy.storedAt,
      revalidateForMs: copy.revalidateUntil - now,
      errorForMs: copy.errorUntil - now,
    },
    at: now,
    value: copy.value,
  };
  const refreshing = runtime.localRefreshes.has(id) || now < copy.retryAt;
  const caller = call.options.staleRefresh === 'caller';
  if (copy.revalidateUntil > now && (refreshing || !caller)) {
    if (!refreshing) refreshLocally(runtime, call, id);
    const stale = staleOutcome(runtime, call, 'revalidating');
    if (stale) return stale;
  }
  try {
    return await refreshHere(runtime, call, () => runLocalOnce(runtime, call));
  } catch (error) {
    failedHere(runtime, call, id, error);
    const fallback = staleOutcome(runtime, call, 'error');
    if (fallback) return fallback;
    throw error;
  }
}

/** Runs the refresh of this node's stale copy of `id` detached from `call`. Never throws. */
function refreshLocally(runtime: FlightRuntime, call: FlightCall, id: string): void {
  runtime.localRefreshes.add(id);
  runLocalOnce(runtime, call.detached())
    .catch((error: unknown) => failedHere(runtime, call, id, error))
    .finally(() => runtime.localRefreshes.delete(id));
}

/** A refresh of this node's stale copy of `id` failed: reported, and not tried again here for `retryAfterMs`. */
function failedHere(runtime: FlightRuntime, call: FlightCall, id: string, error: unknown): void {
  const now = runtime.options.clock.now();
  const copy = runtime.copies.staleCopy(id, now);
  if (copy) copy.retryAt = now + call.policy.stale.retryAfterMs;
  if (runtime.events.wants('refresh-failed')) runtime.refreshFailed(call.ref, 0, localFailureOf(error, call));
}

/** The failure a local run threw (a `FlightExecutionError`, or what the stage's rules make of anything else). */
function localFailureOf(error: unknown, call: FlightCall): { type: FailureType; code: string; message: string } {
  if (error instanceof FlightExecutionError) return { type: error.errorType, code: error.errorCode, message: error.message };
  return toFailureRecord(error, call.policy);
}
