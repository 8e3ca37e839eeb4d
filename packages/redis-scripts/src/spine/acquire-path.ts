/**
 * The coordinator's `acquire`: the fast acquire when it decides (a reply that came back late confirmed by
 * the server clock first), else the acquire script with its subscribe-first ticket; the reply handed to
 * core with the flight's keys as its handle, how long a replayed result is still stored, and a result
 * stored as bytes read back as bytes.
 */
import { FlightCoordinationError } from '@flight/core';
import type { AcquireInput, AcquireReply, Fence, FlightRef, StoredResult } from '@flight/core/adapter';
import { FAST_ACQUIRE_SLACK_MS, type FastAcquire } from '../fast-paths/fast-acquire';
import type { RunKeys } from '../flight-keys-of';
import type { FollowedRuns } from '../wake-up/followed-runs';
import type { JoinPredictor } from '../fast-paths/join-predictor';
import type { Notifications } from '../wake-up/notifications';
import type { ResolvedRedisOptions } from '../options';
import type { OwnerWrite, OwnerWrites } from './owner-writes';
import { confirmReplicatedOwnership } from './replicated-ownership';
import { UnacknowledgedWrite } from './unacknowledged-write';
import { isBytesResult, resultBytesOf, staleBytesOf, type ScriptReply } from './reply';
import { acquireArgs, ms } from './script-args';
import type { ScriptCalls } from './script-calls';
import { recordNow, type ServerClock, type ServerClocks } from '../fast-paths/server-clock';
import { acquireReply } from './write-replies';

/**
 * How long a herd's follower waits for its channel's subscription before it sends its acquire anyway
 * (its wait then re-reads the flight once the subscription is confirmed, as any other).
 */
export const SUBSCRIBE_FIRST_WAIT_MS = 250;

/** How late a fast acquire's reply may come back before its run is confirmed (ms; see `confirmLateOwner`). */
function lateAfterMs(input: AcquireInput): number {
  return Math.min(FAST_ACQUIRE_SLACK_MS, input.takeoverAfterMs / 3);
}

/** What the acquire path runs on: the coordinator's parts. */
export interface AcquireDeps {
  opts: ResolvedRedisOptions;
  calls: ScriptCalls;
  fast: FastAcquire | undefined;
  notifications: Notifications;
  followedRuns: FollowedRuns;
  predictor: JoinPredictor;
  serverClocks: ServerClocks;
  serverClock: (key: string) => ServerClock | undefined;
  /** Reads a key as bytes (clients that store results as bytes). */
  getBuffer: ((key: string) => Promise<Buffer | null>) | undefined;
  /** Runs an owner write (the coordinator's, which samples the server clock). */
  ownerWrite: OwnerWrite;
  /** Strict acknowledgement confirms an ownership with `markRunning`, and gives an unconfirmed one up with `fail`. */
  ownerWrites: Pick<OwnerWrites, 'markRunning' | 'fail'>;
  closed(): boolean;
}

/** `reply`, saying that the request that gave its lease was sent `agoMs` before it was read (`AcquireReply.leaseSentAgoMs`). */
function leaseSent(reply: AcquireReply, agoMs: number): AcquireReply {
  if (reply.outcome === 'OWNER_NEW' || reply.outcome === 'OWNER_TAKEOVER') reply.leaseSentAgoMs = agoMs;
  return reply;
}

export class AcquirePath {
  constructor(private readonly deps: AcquireDeps) {}

  /** `acquire`: the fast path when it decides, else the script; a result stored as bytes read back as bytes. */
  async acquire(input: AcquireInput, keys: RunKeys, attempt: number): Promise<AcquireReply> {
    const { calls, fast, serverClocks, opts } = this.deps;
    // The fast acquire neither reads nor offers stale copies.
    if (calls.checked && fast && !input.acceptStale) {
      const sentAt = serverClocks.mark();
      const quick = fast.attempt(input, keys);
      const decided = quick && (await calls.sent('acquire', input, quick));
      if (decided) {
        const agoMs = serverClocks.mark() - sentAt;
        if (decided.outcome === 'OWNER_NEW' && !opts.clock && agoMs > lateAfterMs(input))
          return this.confirmLateOwner(input, keys, decided, attempt);
        return this.finishedReply(input, keys, leaseSent(decided, agoMs), attempt);
      }
    }
    return this.scriptAcquire(input, keys, attempt);
  }

  /**
   * A result as stored: a reply's text, or — for a result stored as bytes (`isBytesResult`) — the flight's
   * key read again as bytes, when it still holds run `epoch`'s result (undefined when it holds anything
   * else by now).
   */
  async storedResult(ref: FlightRef, keys: RunKeys, epoch: number, result: string | undefined): Promise<StoredResult | undefined> {
    const { getBuffer, calls } = this.deps;
    if (!isBytesResult(result) || !getBuffer) return result;
    const stored = await calls.call('read', ref, () => getBuffer(keys.meta));
    return stored === null ? undefined : resultBytesOf(stored, epoch);
  }

  /**
   * The acquire reply handed to core: `out`, with `keys` as its handle (see flight-keys-of.ts); for the
   * replay of a result stored as bytes, with that result read as bytes (a new run replacing it meanwhile,
   * forgotten or expired between the two reads, is asked about again). Synchronous unless it reads.
   */
  private finishedReply(input: AcquireInput, keys: RunKeys, out: AcquireReply, attempt: number): AcquireReply | Promise<AcquireReply> {
    out.handle = keys;
    if (out.stale && isBytesResult(out.stale.result)) return this.staleAsBytes(input, out);
    if (out.outcome !== 'REPLAY_SUCCESS') return out;
    // By the clock of the server that holds the result (just sampled when a script answered).
    const now = recordNow(this.deps.opts.clock, this.deps.serverClock, keys.meta);
    if (now !== undefined) out.storedForMs = out.meta.expireAt - now;
    if (!isBytesResult(out.result)) return out;
    return this.storedResult(input, keys, out.meta.epoch, out.result).then((result) => {
      if (result !== undefined) return { ...out, result };
      if (attempt === 2) {
        throw new FlightCoordinationError('the stored result kept changing while it was read', {
          context: { stage: input.stage, key: input.key },
        });
      }
      return this.acquire(input, keys, attempt + 1);
    });
  }

  /**
   * `out` with its stale copy's result read as bytes (a result stored as bytes, see `isBytesResult`); without
   * the offer when the copy is another run's by now or the client cannot read bytes.
   */
  private async staleAsBytes(input: AcquireInput, out: AcquireReply): Promise<AcquireReply> {
    const { getBuffer, calls } = this.deps;
    const offer = out.stale!;
    const keys = out.handle as RunKeys;
    const stored = getBuffer ? await calls.call('read', input, () => getBuffer(keys.stale)) : null;
    const result = stored === null ? undefined : staleBytesOf(stored, offer.epoch);
    const { stale: _dropped, ...rest } = out;
    return result === undefined ? rest : { ...out, stale: { ...offer, result } };
  }

  /**
   * A reply to the fast acquire's SET that came back late: the SET may have run late too, and its record,
   * stamped when it was sent, may have landed stale (another caller may have taken it over already), past its
   * lease, or with an epoch not above an earlier run's (FAST_ACQUIRE_SLACK_MS). Before its run starts, the
   * run is confirmed by the server clock: markRunning renews its lease and restamps it (fast-paths/fast-acquire.ts).
   * Refused, the run is not this caller's: it asks again through the script, and follows whoever holds it.
   */
  private async confirmLateOwner(input: AcquireInput, keys: RunKeys, decided: AcquireReply, attempt: number): Promise<AcquireReply> {
    const fence: Fence = {
      stage: input.stage,
      key: input.key,
      ownerId: input.ownerId,
      ownerToken: input.ownerToken,
      epoch: decided.meta.epoch,
    };
    const args = [...this.deps.calls.fenceArgs(fence, keys), ms('leaseTtlMs', input.leaseTtlMs), '1'];
    const sentAt = this.deps.serverClocks.mark();
    const confirmed = await this.deps.ownerWrite('markRunning', fence, args, false, keys);
    if (confirmed.ok) {
      const reply = leaseSent({ outcome: 'OWNER_NEW', meta: confirmed.meta }, this.deps.serverClocks.mark() - sentAt);
      return this.finishedReply(input, keys, reply, attempt);
    }
    return this.scriptAcquire(input, keys, attempt);
  }

  /** The acquire script (the rules on the server clock), with its subscribe-first ticket. */
  private async scriptAcquire(input: AcquireInput, keys: RunKeys, attempt: number): Promise<AcquireReply> {
    const { calls, notifications, predictor, opts, serverClocks, followedRuns } = this.deps;
    const args = acquireArgs(calls.nowArg(), input);
    // Taken before the command is sent: see `Ticket` in notifications.ts. A herd's follower subscribes
    // first, so that its wait needs no re-read (fast-paths/join-predictor.ts).
    // A caller that may be given a stale value does not wait for a subscription it will likely not need.
    const ticket =
      input.joinEpoch === undefined && !input.acceptStale && calls.checked && predictor.joins(input.stage)
        ? await notifications.prepareAcquire(keys.channel, Math.min(opts.commandTimeoutMs, SUBSCRIBE_FIRST_WAIT_MS))
        : notifications.beginAcquire(keys.channel);
    let reply: ScriptReply;
    const sentAt = serverClocks.mark();
    try {
      reply = await calls.script('acquire', input, args, true, keys);
    } catch (error) {
      if (ticket) notifications.endAcquire(ticket, null);
      if (!(error instanceof UnacknowledgedWrite)) throw error;
      return confirmReplicatedOwnership(this.deps, input, keys, error, () => this.scriptAcquire(input, keys, attempt));
    }
    if (ticket) notifications.endAcquire(ticket, reply.code === 'FOLLOWER_WAIT' && !this.deps.closed() ? reply.meta : null);
    if (reply.code === 'FOLLOWER_WAIT' && reply.meta) followedRuns.joined(keys.meta, { epoch: reply.meta.epoch, nonce: reply.meta.nonce });
    if (reply.serverNow) this.deps.serverClock(keys.meta)?.sample(reply.serverNow, sentAt);
    const out = leaseSent(acquireReply(reply, input), serverClocks.mark() - sentAt);
    predictor.learn(input.stage, out.outcome);
    return this.finishedReply(input, keys, out, attempt);
  }
}
