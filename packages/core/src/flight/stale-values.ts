/**
 * Stale values (the stage option `stale`: RFC 5861 across the cluster): what a call does with the stale copy
 * its acquire offered — take it at once while one refresh runs (its own run, detached from it, when the
 * acquire gave it the lease), or in place of a failed run's error.
 */
import { flightId } from '../keys/key-builder.js';
import type { LocalDoOptions, LocalResult } from '../local/local-single-flight.js';
import type { AcquireReply } from '../state/types.js';
import { noteWork, type FlightCall, type Outcome } from './flight-call.js';
import type { FlightRuntime } from './flight-runtime.js';
import { takeOwnership } from './owner-run.js';

/** Keeps the stale copy `reply` offered `call` (the latest offer wins), when the call accepts stale values. */
export function holdOffer(runtime: FlightRuntime, call: FlightCall, reply: AcquireReply): void {
  if (call.acceptsStale && reply.stale) call.offer = { offer: reply.stale, at: runtime.options.clock.now(), since: call.since };
}

/**
 * The stale value `call` was offered, while its window for `reason` lasts (counted on this node's clock from
 * the reply); undefined without an offer, past the window, after a forget of the flight that came since the
 * offer was taken, or when the copy fails verification (it is then dropped from the call and never served).
 */
export function staleOutcome(runtime: FlightRuntime, call: FlightCall, reason: 'revalidating' | 'error'): Outcome | undefined {
  const held = call.offer;
  if (!held) return undefined;
  if (!runtime.copies.current(flightId(call.ref), held.since)) {
    call.offer = undefined;
    return undefined;
  }
  const { offer } = held;
  const elapsed = runtime.options.clock.now() - held.at;
  if ((reason === 'revalidating' ? offer.revalidateForMs : offer.errorForMs) - elapsed <= 0) return undefined;
  let value: unknown = held.value;
  const local = 'value' in held;
  if (!local) {
    try {
      value = runtime.decode(offer.result, call.maxResultBytes).value;
    } catch (error) {
      call.offer = undefined;
      runtime.options.logger.warn({ ...call.ref, err: error }, 'stale copy failed verification; not serving it');
      return undefined;
    }
  }
  const ageMs = offer.ageMs + elapsed;
  // A copy this node kept carries its run's epoch when it had one (0: a run without a lease).
  const epoch = local && offer.epoch === 0 ? undefined : offer.epoch;
  if (runtime.events.wants('stale')) runtime.events.emit('stale', { ...call.ref, epoch: epoch ?? 0, ageMs, reason });
  noteWork(call.note, 'stale', epoch, undefined, runtime.sinceMs(call.waitStartedAt));
  return { value, role: 'stale', epoch, ageMs, trace: call.note };
}

/**
 * Runs the refresh whose lease `reply` gave `call`, detached from the call (which takes the stale value):
 * a normal owned run (heartbeats, fencing, takeover) whose value replaces the stale copy. Its failure is
 * reported by the `refresh-failed` event; a refresh fenced by a newer owner just ends. Never throws.
 */
export function refreshDetached(runtime: FlightRuntime, call: FlightCall, reply: AcquireReply): void {
  const refresh = call.detached();
  refresh.offer = call.offer;
  refresh.acquireSentAt = call.acquireSentAt;
  refresh.refreshing = (call.offer?.offer.errorForMs ?? 0) > 0;
  takeOwnership(runtime, refresh, reply).catch((error: unknown) => {
    runtime.options.logger.debug({ ...call.ref, err: error }, 'refresh of a stale value failed');
  });
}

/**
 * Runs the refresh whose lease `reply` gave `call` for the call itself (`staleRefresh: 'caller'`): callers of
 * this node that arrive meanwhile get its stale value (`staleWhileRefreshingHere`) instead of joining it.
 */
export async function refreshHere<T>(runtime: FlightRuntime, call: FlightCall, run: () => Promise<T>): Promise<T> {
  const id = flightId(call.ref);
  runtime.copies.refreshStarted(id, call);
  try {
    return await run();
  } finally {
    runtime.copies.refreshEnded(id, call);
  }
}

/** The stale value of a refresh another call of this node runs itself, for `call` (which accepts one); else undefined. */
export function staleWhileRefreshingHere(runtime: FlightRuntime, call: FlightCall, id: string): Outcome | undefined {
  const offer = call.acceptsStale ? runtime.copies.refreshOffer(id) : undefined;
  if (!offer) return undefined;
  call.offer = offer;
  return staleOutcome(runtime, call, 'revalidating');
}

/**
 * Joins the run of `localId` another call of this node leads, for `call` (which accepts stale values): should
 * that run turn out to be a refresh its caller runs itself (`staleRefresh: 'caller'`), `call` leaves it and
 * takes the refresh's stale value at once instead of waiting for the whole supplier.
 */
export async function joinOrStale(
  runtime: FlightRuntime,
  call: FlightCall,
  localId: string,
  fn: () => Promise<Outcome>,
  options: LocalDoOptions,
): Promise<LocalResult<Outcome>> {
  const id = flightId(call.ref);
  const refresh = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, refresh.signal]) : refresh.signal;
  const stop = runtime.copies.onRefresh(id, () => refresh.abort());
  try {
    return await runtime.local.do(localId, fn, { ...options, signal });
  } catch (error) {
    if (!refresh.signal.aborted || options.signal?.aborted) throw error;
    const stale = staleWhileRefreshingHere(runtime, call, id);
    // The refresh's offer was gone already (forgotten, or past its window): join the run after all.
    return stale ? { value: stale, shared: true, leader: false } : runtime.local.do(localId, fn, options);
  } finally {
    stop();
  }
}
