/**
 * The writes that end or drop a run from outside its owner — cancel, expire, forget — each by its script
 * on the flight's keys, notifying whoever waits on the flight's channel.
 */
import type { FlightCoordinator, FlightRef } from '@flight/core/adapter';
import type { RunKeys } from '../flight-keys-of';
import { checkEpoch, MAX_ERROR_MESSAGE_LENGTH, ms } from './script-args';
import type { ScriptCalls } from './script-calls';
import { cancelReply, expireReply, forgetReply } from './write-replies';

export type RunControl = Pick<FlightCoordinator, 'cancel' | 'expire' | 'forget'>;

export function createRunControl(calls: Pick<ScriptCalls, 'script' | 'nowArg'>, keysOf: (ref: FlightRef) => RunKeys): RunControl {
  const { script, nowArg } = calls;
  return {
    async cancel(ref, input) {
      checkEpoch(input.epoch);
      const keys = keysOf(ref);
      const args = [
        nowArg(),
        keys.channel,
        input.reason.slice(0, MAX_ERROR_MESSAGE_LENGTH),
        ms('ttlMs', input.ttlMs),
        input.epoch === undefined ? '' : String(input.epoch),
      ];
      return cancelReply(await script('cancel', ref, args, true, keys));
    },

    async expire(ref, input) {
      const keys = keysOf(ref);
      return expireReply(await script('expire', ref, [nowArg(), keys.channel, ms('ttlMs', input.ttlMs)], true, keys));
    },

    async forget(ref) {
      const keys = keysOf(ref);
      return forgetReply(await script('forget', ref, [nowArg(), keys.channel], true, keys));
    },
  };
}
