/**
 * Strict replica acknowledgement of taking ownership (`waitReplicas.unacknowledged`): an acquire that made
 * the caller the owner, but that fewer replicas acknowledged than asked, does not let the caller run. With
 * 'retry' the record is written again (markRunning renews the lease, so its followers keep waiting) and
 * waited for until a replica has it or `retryForMs` runs out (a write whose `WAIT` got no answer counts as
 * unacknowledged: see script-calls.ts); a record that is gone meanwhile (a failover promoted a replica
 * without it) is asked for again from the start. Unconfirmed, the run is given up as a
 * retryable failure, so that its followers take it over rather than wait for its lease, and the caller gets
 * `FlightReplicationError`.
 */
import { FlightCoordinationError, FlightReplicationError } from '@flight/core';
import { sleep, type AcquireInput, type AcquireReply, type Fence, type WriteReply } from '@flight/core/adapter';
import type { RunKeys } from '../flight-keys-of';
import type { ResolvedRedisOptions, ResolvedWaitReplicas } from '../options';
import type { OwnerWrites } from './owner-writes';
import type { ScriptReply } from './reply';
import type { UnacknowledgedWrite } from './unacknowledged-write';
import { acquireReply } from './write-replies';

/** Between two attempts whose `WAIT` did not block (an error, or a record found gone). */
const RETRY_PAUSE_MS = 50;

/** How long a given-up run's failure is kept: long enough to wake its followers, who then take it over. */
const GIVEN_UP_TTL_MS = 1000;

export interface ReplicatedOwnershipDeps {
  opts: ResolvedRedisOptions;
  /** The coordinator's `markRunning` (which waits for replicas in strict mode) and `fail`. */
  ownerWrites: Pick<OwnerWrites, 'markRunning' | 'fail'>;
}

/**
 * The acquire reply once a replica acknowledged the ownership `unacked` took, or `FlightReplicationError`.
 * `acquireAgain`: the acquire from the start, for a record that is no longer this caller's.
 */
export async function confirmReplicatedOwnership(
  deps: ReplicatedOwnershipDeps,
  input: AcquireInput,
  keys: RunKeys,
  unacked: UnacknowledgedWrite,
  acquireAgain: () => Promise<AcquireReply>,
): Promise<AcquireReply> {
  const wait = deps.opts.waitReplicas as ResolvedWaitReplicas;
  const taken = acquireReply(unacked.reply as ScriptReply, input);
  const fence: Fence = {
    stage: input.stage,
    key: input.key,
    ownerId: input.ownerId,
    ownerToken: input.ownerToken,
    epoch: taken.meta.epoch,
  };
  const clock = deps.opts.localClock;
  const until = clock.now() + (wait.unacknowledged === 'retry' ? wait.retryForMs : 0);
  let last: FlightReplicationError = unacked;
  while (clock.now() < until) {
    let renewed: WriteReply;
    const sentAt = clock.now();
    try {
      renewed = await deps.ownerWrites.markRunning(fence, input);
    } catch (error) {
      if (error instanceof FlightReplicationError) last = error;
      else if (!(error instanceof FlightCoordinationError)) throw error;
      await sleep(clock, RETRY_PAUSE_MS);
      continue;
    }
    // The lease dates from this renewal, not from the acquire the caller sent.
    if (renewed.ok) return { ...taken, meta: renewed.meta, handle: keys, leaseSentAgoMs: clock.now() - sentAt };
    // Not this caller's any more: lost in a failover, or taken over after its lease. Asked again; a
    // coordinator that does not answer yet (the promoted primary not reached) is asked again in the loop.
    try {
      return await acquireAgain();
    } catch (error) {
      if (!(error instanceof FlightCoordinationError) || error instanceof FlightReplicationError) throw error;
      await sleep(clock, RETRY_PAUSE_MS);
    }
  }
  await giveUp(deps, fence, last);
  throw new FlightReplicationError(
    `taking ownership was acknowledged by ${last.acknowledged} of the ${last.required} replicas it needs` +
      (wait.unacknowledged === 'retry' ? ` within ${wait.retryForMs} ms` : ''),
    { context: { stage: input.stage, key: input.key }, acknowledged: last.acknowledged, required: last.required },
  );
}

/** Ends the unconfirmed run as a retryable failure (best effort: its lease ends it anyway). */
async function giveUp(deps: ReplicatedOwnershipDeps, fence: Fence, error: FlightReplicationError): Promise<void> {
  const failure = { type: 'UNEXPECTED' as const, code: error.code, message: error.message, retryable: true };
  await deps.ownerWrites.fail(fence, { failure, ttlMs: GIVEN_UP_TTL_MS }).catch(() => undefined);
}
