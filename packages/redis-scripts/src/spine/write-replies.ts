/** The scripts' replies (`ScriptReply`) as core's reply types of each transition (owner writes: `decodeWriteReply` in reply.ts). */
import type { AcquireOutcome, AcquireReply, CancelReply, ExpireReply, FlightRef, ForgetReply } from '@flight/core/adapter';
import { toFlightRedisError } from '../errors';
import type { ScriptReply } from './reply';

const ACQUIRE_OUTCOMES = new Set<string>(['OWNER_NEW', 'OWNER_TAKEOVER', 'FOLLOWER_WAIT', 'REPLAY_SUCCESS', 'REPLAY_FAILURE']);

/** Throws `FlightCoordinationError` for a reply that is no acquire outcome. */
export function acquireReply(reply: ScriptReply, ref: FlightRef): AcquireReply {
  if (!ACQUIRE_OUTCOMES.has(reply.code) || !reply.meta) {
    throw toFlightRedisError(new Error(`unexpected acquire reply ${reply.code}`), 'acquire', { stage: ref.stage, key: ref.key });
  }
  const out: AcquireReply = { outcome: reply.code as AcquireOutcome, meta: reply.meta };
  if (reply.code === 'REPLAY_SUCCESS') out.result = reply.result;
  if (reply.stale) out.stale = reply.stale;
  return out;
}

export function cancelReply(reply: ScriptReply): CancelReply {
  if (reply.code === 'OK' && reply.meta) return { ok: true, meta: reply.meta };
  const code = reply.code === 'EPOCH_MISMATCH' ? 'EPOCH_MISMATCH' : 'NOT_ACTIVE';
  return { ok: false, code, status: reply.meta?.status ?? null };
}

export function expireReply(reply: ScriptReply): ExpireReply {
  if (reply.code === 'OK' && reply.meta) return { ok: true, meta: reply.meta };
  return { ok: false, code: reply.code === 'NOT_DUE' ? 'NOT_DUE' : 'NOT_ACTIVE', status: reply.meta?.status ?? null };
}

export function forgetReply(reply: ScriptReply): ForgetReply {
  if (reply.code === 'OK' && reply.meta) return { ok: true, meta: reply.meta };
  return { ok: false, code: 'NOT_FOUND', status: null };
}
