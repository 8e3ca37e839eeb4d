/** What each caller can learn about its own call: whether it ran the model, followed a run, or replayed one. */
import type { FlightResult, FlightRole, StreamPosition } from '@flight/core';

export interface FlightCallInfo {
  /** `owner`: this call ran the model; `follower`: it got a run's answer as it happened; `replay`/`l1`: a stored one. */
  role: FlightRole;
  /** Another caller's run answered this call (its usage was not spent for it); false for the owner, whoever joined its run. */
  shared: boolean;
  /** The run that answered (its fencing epoch; undefined without a coordinator). */
  epoch: number | undefined;
  stage: string;
  key: string;
}

const infos = new WeakMap<object, FlightCallInfo>();

/**
 * How a result of a wrapped client was obtained: for a completion, response or embedding list; for a
 * stream, once it was read to its end. Undefined for a call that was not coalesced (the sampling policy,
 * a body that is not plain JSON, a method that passes through).
 */
export function flightOf(result: object): FlightCallInfo | undefined {
  return infos.get(result);
}

/** The info of a caller's result; `ranHere`: this caller's own supplier made the model call. */
export function infoOf(result: Pick<FlightResult<unknown>, 'role' | 'epoch' | 'stage' | 'key'>, ranHere: boolean): FlightCallInfo {
  return { role: result.role, shared: !ranHere, epoch: result.epoch, stage: result.stage, key: result.key };
}

/** This caller's own copy of a shared answer (its top level; the rest is shared and frozen), with its info. */
export function perCaller<T extends object>(value: T, info: FlightCallInfo): T {
  const copy = Object.freeze({ ...value });
  infos.set(copy, info);
  return copy;
}

export function tag(result: object, info: FlightCallInfo): void {
  infos.set(result, info);
}

/** Where each stream of a wrapped client is: the position after the last event read from it. */
export const positions = new WeakMap<object, StreamPosition>();

/**
 * The position after the last event read from a coalesced stream: keep it (for instance as an SSE event
 * id) to resume the same run after it, on any node, with `flightRequest({ after })`. Undefined before the
 * first event and for streams that were not coalesced.
 */
export function positionOf(stream: object): StreamPosition | undefined {
  return positions.get(stream);
}
