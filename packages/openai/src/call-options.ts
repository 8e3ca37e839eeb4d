/**
 * Per-call flight options carried in the SDK's own request options, so a call keeps the SDK's signature:
 * `client.chat.completions.create(body, flightRequest({ sessionId }, { signal }))`.
 */
import { FlightValidationError, type StreamPosition } from '@flight/core';
import { assertKnownOptions } from '@flight/core/adapter';

export interface FlightCallOptions {
  /**
   * The session the call belongs to: on a stage with a session lock, coalesced calls of one session run
   * one at a time across the cluster (see the core's `sessionLock`). Calls that are not coalesced ignore it.
   */
  sessionId?: string;
  /**
   * Streamed calls only: continue the run after this position (`positionOf(stream)` of a stream that was
   * cut off), on any node. A resumed call never starts a model call: when the run is gone it fails with
   * `FlightStreamExpiredError`; when it was replaced by a new run it fails with
   * `FlightStreamInterruptedError`, whose `context.newEpoch` names the run to read from its start
   * (`after: { epoch: newEpoch, index: 0 }`).
   */
  after?: StreamPosition;
}

/** The SDK's request options: `signal`, `timeout`, `headers`, … */
type RequestOptions = Record<string, unknown>;

const FLIGHT_CALL = Symbol.for('@flight/openai.call');
const CALL_OPTION_NAMES = ['sessionId', 'after'] as const;

/**
 * The SDK's request options with this call's flight options. They ride along unseen (a property the SDK
 * never reads or copies) and are checked when the call is made.
 */
export function flightRequest<R extends object = RequestOptions>(call: FlightCallOptions, request?: R): R {
  assertKnownOptions('flightRequest', call, CALL_OPTION_NAMES);
  const options = { ...request } as R;
  Object.defineProperty(options, FLIGHT_CALL, { value: call, enumerable: false });
  return options;
}

/** The flight options of a call's request options (checked), or none. */
export function callOptionsOf(request: object | undefined, streamed: boolean): FlightCallOptions {
  const call = (request as Record<symbol, unknown> | undefined)?.[FLIGHT_CALL] as FlightCallOptions | undefined;
  if (call === undefined) return {};
  if (typeof call !== 'object' || call === null) throw new FlightValidationError('flightRequest: the call options must be an object');
  const { sessionId, after } = call;
  if (sessionId !== undefined && (typeof sessionId !== 'string' || sessionId.length === 0 || sessionId.length > 256))
    throw new FlightValidationError(`flightRequest: sessionId must be a string of 1 to 256 characters, got ${JSON.stringify(sessionId)}`);
  if (after !== undefined && !streamed)
    throw new FlightValidationError('flightRequest: after resumes a streamed call; this call is not streamed (stream: true)');
  return call;
}

/** A resume of a call that is not coalesced: there is no run to continue. */
export function notResumable(): FlightValidationError {
  return new FlightValidationError(
    'flightRequest: after resumes a coalesced call; this one is not coalesced (it samples without a seed, or its body is not plain JSON)',
  );
}
