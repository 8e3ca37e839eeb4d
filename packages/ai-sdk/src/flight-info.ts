/** What each caller can learn about its own call: it comes in the result's `providerMetadata.flight`. */
import type { FlightResult, FlightRole } from '@flight/core';

/** `providerMetadata.flight` of a result (and of a stream's `finish` part) the middleware answered. */
export interface FlightCallInfo {
  /** `owner`: this call ran the model; `follower`: it got a run's answer as it happened; `replay`/`l1`: a stored one. */
  role: FlightRole;
  /** Another caller's run answered this call (its tokens were not spent for it). */
  shared: boolean;
  /** The run that answered (its fencing epoch; absent without a coordinator). */
  epoch?: number;
  stage: string;
  key: string;
}

/** The info of a caller's result; `ranHere`: this caller's own supplier made the model call. */
export function infoOf(result: Pick<FlightResult<unknown>, 'role' | 'epoch' | 'stage' | 'key'>, ranHere: boolean): FlightCallInfo {
  return {
    role: result.role,
    shared: !ranHere,
    ...(result.epoch === undefined ? {} : { epoch: result.epoch }),
    stage: result.stage,
    key: result.key,
  };
}

/** `metadata` (a result's or a finish part's `providerMetadata`) with the call's info under `flight`. */
export function withFlightInfo<M extends Record<string, unknown> | undefined>(metadata: M, info: FlightCallInfo) {
  return { ...metadata, flight: { ...info } };
}

/**
 * How a call through the middleware was answered, from its `providerMetadata` (`generateText`'s and
 * `streamText`'s result have it): undefined for a call that was not shared (the sampling policy, options
 * that are not plain data).
 */
export function flightOf(providerMetadata: Record<string, unknown> | undefined): FlightCallInfo | undefined {
  const info = providerMetadata?.flight as FlightCallInfo | undefined;
  return info && typeof info.role === 'string' ? info : undefined;
}
