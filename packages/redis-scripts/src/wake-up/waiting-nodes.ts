/**
 * `waitingNodes`: how many other nodes listen for a flight's outcome now — the connections subscribed to
 * its notice channel on the shard that owns it (lua/listeners.lua), less this process's own subscriber
 * when the server confirmed it on the channel. A subscription still on its way counts as another node:
 * the count may be high, never low, so a run somebody waits for is never taken for abandoned.
 */
import type { FlightCoordinator, FlightRef } from '@flight/core/adapter';
import type { ScriptRunner } from '../driver';
import type { RunKeys } from '../flight-keys-of';
import type { ScriptCalls } from '../spine/script-calls';
import { runScript } from '../spine/scripts';
import type { Notifications } from './notifications';

export function createWaitingNodes(
  driver: ScriptRunner,
  calls: Pick<ScriptCalls, 'call'>,
  keysOf: (ref: FlightRef) => RunKeys,
  notifications: Pick<Notifications, 'listensOn'>,
): NonNullable<FlightCoordinator['waitingNodes']> {
  return async (ref) => {
    const keys = keysOf(ref);
    const listeners = Number(await calls.call('listeners', ref, () => runScript(driver, 'listeners', keys.list, [keys.channel])));
    if (!Number.isSafeInteger(listeners)) return undefined;
    return Math.max(0, listeners - (notifications.listensOn(keys.channel) ? 1 : 0));
  };
}
