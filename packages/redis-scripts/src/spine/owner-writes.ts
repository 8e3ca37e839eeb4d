/**
 * The owner's writes of a run (markRunning, heartbeat, complete, fail), each by its script on the flight's
 * keys — complete first offered to the untouched-complete fast path (fast-paths/choose.ts), which handles it or
 * declines. An accepted write samples the clock of the server holding the key: its record's `updatedAt` is
 * that server's now (unless the reply took too long to be read: server-clock.ts).
 */
import { FlightValidationError } from '@flight/core';
import type { FlightCoordinator, Fence, WriteReply } from '@flight/core/adapter';
import type { ScriptArg } from '../driver';
import type { RunKeys } from '../flight-keys-of';
import type { LuaScriptName } from './lua.generated';
import type { ResolvedRedisOptions } from '../options';
import { checkResultSize, MAX_ERROR_MESSAGE_LENGTH, ms } from './script-args';
import type { ScriptCalls } from './script-calls';
import type { ServerClock, ServerClocks } from '../fast-paths/server-clock';
import type { UntouchedComplete } from '../fast-paths/untouched-complete';

export type OwnerWrites = Pick<FlightCoordinator, 'markRunning' | 'heartbeat' | 'complete' | 'fail'>;

/** Runs owner write `name` on `keys` (see `ownerWriter`). */
export type OwnerWrite = (
  name: LuaScriptName,
  fence: Fence,
  args: readonly ScriptArg[],
  waits: boolean,
  keys: RunKeys,
) => Promise<WriteReply>;

export interface OwnerWriteDeps {
  opts: ResolvedRedisOptions;
  calls: ScriptCalls;
  keysOf: (ref: Fence) => RunKeys;
  ownerWrite: OwnerWrite;
  untouched: UntouchedComplete | undefined;
  /** The client stores results as bytes. */
  storesBytes: boolean;
}

/** Runs owner write `name` on `keys`, sampling the server clock from an accepted one. */
export function ownerWriter(
  calls: Pick<ScriptCalls, 'write'>,
  serverClocks: ServerClocks,
  serverClock: (key: string) => ServerClock | undefined,
): OwnerWrite {
  return async (name, fence, args, waits, keys) => {
    keys.untouched = undefined; // the record changes, or the write is refused: either way not as written
    const sentAt = serverClocks.mark();
    const { reply, updatedAt } = await calls.write(name, fence, args, waits, keys);
    if (updatedAt !== undefined) serverClock(keys.meta)?.sample(updatedAt, sentAt);
    return reply;
  };
}

export function createOwnerWrites(deps: OwnerWriteDeps): OwnerWrites {
  const { opts, calls, keysOf, untouched, ownerWrite } = deps;
  const { fenceArgs } = calls;
  // In strict mode a lease renewal a replica did not acknowledge does not count (unacknowledged-write.ts).
  const renewalWaits = opts.waitReplicas?.strict ?? false;
  return {
    async markRunning(fence, lease) {
      const keys = keysOf(fence);
      return ownerWrite('markRunning', fence, [...fenceArgs(fence, keys), ms('leaseTtlMs', lease.leaseTtlMs)], renewalWaits, keys);
    },

    async heartbeat(fence, lease) {
      const keys = keysOf(fence);
      return ownerWrite('heartbeat', fence, [...fenceArgs(fence, keys), ms('leaseTtlMs', lease.leaseTtlMs)], renewalWaits, keys);
    },

    async complete(fence, input) {
      const { result } = input;
      checkResultSize(result, opts.maxPayloadBytes, fence);
      const keys = keysOf(fence);
      // Bytes never ride in a notice (its text would carry them damaged): followers read them.
      const bytes = typeof result !== 'string';
      if (bytes && !deps.storesBytes) throw new FlightValidationError('this coordinator stores text results only (storesBytes is false)');
      const ttlMs = ms('resultTtlMs', input.resultTtlMs);
      // A TTL the script would refuse is refused by it, with its error.
      // The untouched fast path never writes a stale copy.
      const plain = ttlMs === '0' || input.stale ? undefined : untouched?.attempt(fence, keys, result, Number(ttlMs));
      if (plain) {
        const reply = await plain;
        if (reply) return reply;
      }
      const args = [
        ...fenceArgs(fence, keys),
        bytes ? Buffer.from(result.buffer, result.byteOffset, result.byteLength) : result,
        ttlMs,
        bytes ? '0' : String(opts.inlineResultBytes),
      ];
      if (input.stale) args.push(ms('whileRevalidateMs', input.stale.whileRevalidateMs), ms('ifErrorMs', input.stale.ifErrorMs));
      return ownerWrite('complete', fence, args, true, keys);
    },

    async fail(fence, input) {
      const { failure } = input;
      const keys = keysOf(fence);
      const args = [
        ...fenceArgs(fence, keys),
        failure.type,
        failure.code,
        failure.message.slice(0, MAX_ERROR_MESSAGE_LENGTH),
        failure.retryable ? '1' : '0',
        ms('ttlMs', input.ttlMs),
      ];
      return ownerWrite('fail', fence, args, true, keys);
    },
  };
}
