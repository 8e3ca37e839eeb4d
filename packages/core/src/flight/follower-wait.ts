/**
 * The follower path of a distributed call: another call owns the run, so this one waits for its terminal
 * event (polling at `pollIntervalMs` as a safety net) within `waitTimeoutMs`, then asks again. A small
 * result carried by the event is taken at once, saving the replay's round trip.
 */
import { FlightWaitTimeoutError } from '../errors.js';
import type { AcquireReply } from '../state/types.js';
import type { StreamExecuteOptions } from './types.js';
import { noteWork, type FlightCall, type Outcome } from './flight-call.js';
import type { FlightRuntime } from './flight-runtime.js';

/**
 * Handles a `FOLLOWER_WAIT` reply: waits one round for the owner. Resolves the value the terminal event
 * carried, or undefined when the call asks again; rejects with `FlightWaitTimeoutError` when the wait is over.
 */
export async function followerWait(runtime: FlightRuntime, call: FlightCall, reply: AcquireReply): Promise<Outcome | undefined> {
  const { meta } = reply;
  const { ref, policy, note } = call;
  const { events } = runtime;
  const { clock } = runtime.options;
  if (call.joinEpoch !== meta.epoch && events.wants('follower'))
    events.emit('follower', { ...ref, epoch: meta.epoch, ownerId: meta.ownerId });
  call.joinEpoch = meta.epoch;
  const waitStartedAt = (call.waitStartedAt ??= clock.now());
  noteWork(note, 'follower', meta.epoch, meta.traceparent, runtime.sinceMs(waitStartedAt));
  // A streamed call counts the wait from its last progress (a chunk or a new run), not from the start.
  const progressedAt = (call.options as StreamExecuteOptions).progressedAt?.() ?? 0;
  const remaining = policy.waitTimeoutMs - (clock.now() - Math.max(waitStartedAt, progressedAt));
  if (remaining <= 0) {
    if (note) note.waitedMs = runtime.sinceMs(waitStartedAt);
    events.emit('waited', { ...ref, waitedMs: clock.now() - waitStartedAt, woken: 'timeout' });
    throw new FlightWaitTimeoutError(`waited ${policy.waitTimeoutMs} ms for the owner of ${ref.stage}`, {
      context: { ...ref, epoch: meta.epoch, ownerId: meta.ownerId },
    });
  }
  const event = await runtime.options.coordinator
    .waitForTerminal(ref, { epoch: meta.epoch, timeoutMs: Math.min(policy.pollIntervalMs, remaining), handle: reply.handle })
    .catch(() => null);
  call.woken = event ? 'event' : 'poll';
  // A small result travels with the notice: verified like a stored one, it saves the replay's round
  // trip. Only for the epoch followed; anything else (or a value that fails to decode) asks again.
  if (event?.status === 'SUCCEEDED' && event.epoch === meta.epoch && typeof event.result === 'string') {
    let decoded: { value: unknown; bytes: number } | undefined;
    try {
      decoded = runtime.decode(event.result, call.maxResultBytes);
    } catch (error) {
      runtime.options.logger.warn({ ...ref, err: error }, 'result carried by the terminal event failed verification; reading it instead');
    }
    if (decoded) {
      const { value } = decoded;
      // Just stored by the run this call followed: it lives what that run stored it for, from about now.
      runtime.remember(call, { value, epoch: meta.epoch }, decoded.bytes);
      runtime.emitWaited(ref, waitStartedAt, call.woken);
      noteWork(note, 'follower', meta.epoch, meta.traceparent, runtime.sinceMs(waitStartedAt));
      return { value, role: 'follower', epoch: meta.epoch, trace: note };
    }
  }
  return undefined;
}
