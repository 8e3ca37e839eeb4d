/**
 * Strict replica acknowledgement (`waitReplicas.unacknowledged` other than 'keep'): which owner writes do not
 * count when fewer replicas than asked acknowledged them. Taking ownership (an acquire that answered
 * OWNER_NEW or OWNER_TAKEOVER) and renewing the lease (markRunning, heartbeat): a failover would lose them,
 * and a caller that ran on them could be joined by a second run on the promoted replica. A result or a
 * failure (complete, fail) counts either way: its run is over, and its followers were answered.
 */
import { FlightReplicationError } from '@flight/core';
import type { FlightRef } from '@flight/core/adapter';
import type { LuaScriptName } from './lua.generated';
import type { ScriptReply } from './reply';

/** An owner write fewer replicas acknowledged than strict mode asks for; `reply`: what Redis answered it. */
export class UnacknowledgedWrite extends FlightReplicationError {
  constructor(
    readonly write: LuaScriptName,
    readonly reply: unknown,
    ref: FlightRef,
    acknowledged: number,
    required: number,
  ) {
    super(`${write} was acknowledged by ${acknowledged} of the ${required} replicas it needs; it does not count`, {
      context: { stage: ref.stage, key: ref.key },
      acknowledged,
      required,
    });
  }
}

/** The error for owner write `name`'s `reply` when it needed more acknowledgements; undefined when it counts anyway. */
export function unacknowledged(
  name: LuaScriptName,
  ref: FlightRef,
  reply: unknown,
  acknowledged: number,
  required: number,
): UnacknowledgedWrite | undefined {
  const counts =
    name === 'acquire'
      ? !takesOwnership(reply as ScriptReply)
      : name === 'markRunning' || name === 'heartbeat'
        ? !(reply as { reply: { ok: boolean } }).reply.ok
        : true;
  return counts ? undefined : new UnacknowledgedWrite(name, reply, ref, acknowledged, required);
}

function takesOwnership(reply: ScriptReply): boolean {
  return reply.code === 'OWNER_NEW' || reply.code === 'OWNER_TAKEOVER';
}
