/**
 * `waitForTerminal`: a follower's wait for the end of the run it joined, on the flight's channel, with the
 * re-read that closes the gap between subscribing and the last state. A caller of this process that joined
 * the run by `acquire` is counted in the record's `followers`, so its notice is published and the re-read
 * is a plain `read`; any other waiter marks the record watched by re-reading it with the `watch` script.
 */
import type { FlightCoordinator } from '@flight/core/adapter';
import type { ScriptRunner } from '../driver';
import type { HandledRef, RunKeys } from '../flight-keys-of';
import type { ScriptCalls } from '../spine/script-calls';
import type { FollowedRuns } from './followed-runs';
import type { Notifications } from './notifications';

export interface TerminalWaitDeps {
  calls: Pick<ScriptCalls, 'read' | 'script' | 'nowArg'>;
  keysOf: (ref: HandledRef, handle?: unknown) => RunKeys;
  followedRuns: FollowedRuns;
  notifications: Notifications;
  /** Whether the coordinator is closed (a closed one answers every wait with null at once). */
  closed: () => boolean;
}

export function createTerminalWait(deps: TerminalWaitDeps): FlightCoordinator['waitForTerminal'] {
  const { calls, keysOf, followedRuns, notifications, closed } = deps;
  return (ref, options) => {
    if (closed()) return Promise.resolve(null);
    const keys = keysOf(ref, options.handle);
    const followed = followedRuns.of(keys.meta);
    const joined = followed?.epoch === options.epoch;
    const nonce = joined ? followed!.nonce : undefined;
    const reread = joined
      ? (via?: ScriptRunner) => calls.read(ref, true, via)
      : (via?: ScriptRunner) => calls.script('watch', ref, [calls.nowArg()], false, keys, via);
    return notifications.wait(ref, keys.channel, { ...options, nonce }, reread);
  };
}
