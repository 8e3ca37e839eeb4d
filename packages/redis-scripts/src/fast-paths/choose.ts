/**
 * The fast paths beside the scripts, chosen in one place from what the client and the server can do. Each
 * either handles a call or declines it to the script, which holds the rules (fast-path.ts):
 * - the fast acquire (fast-acquire.ts): a new flight by `SET … NX GET`, when the client has `setIfAbsent`;
 * - the untouched complete (untouched-complete.ts): a run nobody joined or watched completes by one
 *   conditional write (`SET … IFEQ`, or the small compare-and-set script), when the client has
 *   `setIfEqual` and the run was created by the fast acquire.
 * With `waitReplicas` neither runs: every owner write is a script followed by `WAIT`.
 */
import { createCompareAndSet } from './compare-and-set';
import type { RedisDriver } from '../driver';
import { createFastAcquire, type FastAcquire } from './fast-acquire';
import type { JoinPredictor } from './join-predictor';
import type { ResolvedRedisOptions } from '../options';
import type { ScriptCalls } from '../spine/script-calls';
import type { ServerClock, ServerClocks } from './server-clock';
import { createUntouchedComplete, type UntouchedComplete } from './untouched-complete';

export interface FastPaths {
  readonly acquire: FastAcquire | undefined;
  readonly complete: UntouchedComplete | undefined;
}

export function chooseFastPaths(
  driver: RedisDriver,
  opts: ResolvedRedisOptions,
  deps: {
    calls: Pick<ScriptCalls, 'sent'>;
    serverClocks: ServerClocks;
    serverClock: (key: string) => ServerClock | undefined;
    predictor: JoinPredictor;
  },
): FastPaths {
  const { serverClock, serverClocks, predictor } = deps;
  const setIfAbsent = driver.setIfAbsent?.bind(driver);
  const acquire =
    setIfAbsent && !opts.waitReplicas ? createFastAcquire({ setIfAbsent, serverClock, testClock: opts.clock, predictor }) : undefined;
  const setIfEqual = driver.setIfEqual?.bind(driver);
  // Only runs the fast acquire created are untouched (so never with waitReplicas: see above).
  const complete =
    acquire && setIfEqual
      ? createUntouchedComplete({
          compareAndSet: createCompareAndSet(setIfEqual, driver),
          serverClock,
          testClock: opts.clock,
          sent: deps.calls.sent,
          mark: () => serverClocks.mark(),
        })
      : undefined;
  return { acquire, complete };
}
