/**
 * Local mode and the hybrid fallback: no lease, so the run is bounded by `maxRunMs` (and the guard's
 * timeout) through its own deadline. The value never leaves the process: it is deep-frozen, not encoded,
 * unless `encodeLocalResults` asks for the round trip.
 */
import { randomInt } from 'node:crypto';
import { toExecutionError } from '../failure/classify.js';
import { deepFreeze } from '../results/deep-freeze.js';
import { RunScope } from '../run/run-scope.js';
import { noteWork, type FlightCall, type Outcome } from './flight-call.js';
import { failureRecord, type FlightRuntime } from './flight-runtime.js';

const noProgress = () => {};

/**
 * A node-local run id (`FlightContext.run`) for a run without a lease, drawn at random from a range no
 * coordinator's epoch falls in (epochs start at the coordinator's clock × 1000, above 2^50 since 1974), so
 * runs of different nodes, and a local run and a leased one, are never taken for one.
 */
const localRunId = (): number => randomInt(2 ** 40, 2 ** 47);

/** One run of the supplier on this node. */
export async function runLocalOnce(runtime: FlightRuntime, call: FlightCall): Promise<Outcome> {
  const { ref, policy, note } = call;
  noteWork(note, 'local', undefined, note?.traceparent);
  const run = new RunScope();
  runtime.limitRun(run, ref, policy, policy.maxRunMs);
  let value: unknown;
  let size: number;
  try {
    value = await runtime.execRun(call, run, {
      role: 'local',
      epoch: undefined,
      run: localRunId(),
      attempt: 1,
      takeover: false,
      progress: noProgress,
    });
    if (runtime.options.encodeLocalResults) {
      const trip = runtime.roundTrip(value, call.maxResultBytes);
      value = trip.value;
      size = runtime.freezeDecoded(value, trip.payload);
    } else {
      size = deepFreeze(value);
    }
  } catch (error) {
    throw toExecutionError(failureRecord(error, policy, call.options), { stage: ref.stage, key: ref.key, replayed: false, cause: error });
  } finally {
    run.end(runtime.deadlines);
  }
  runtime.remember(call, { value }, size, undefined, {});
  return { value, role: 'local', trace: note };
}
