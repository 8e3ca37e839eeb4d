/** The middleware's options, documented with their defaults and checked in one place (`resolveOptions`). */
import { FlightConfigurationError, type SingleFlight } from '@flight/core';
import { assertKnownOptions, assertStageName } from '@flight/core/adapter';
import { SHARE_POLICIES, type SharePolicy } from './sampling.js';

export interface FlightMiddlewareOptions {
  /** The single-flight instance (`createSingleFlight`) that makes each call once across the cluster. */
  flights: SingleFlight;
  /** The stage the calls run under (its lease, timeouts, result TTL, guard). @default 'ai' */
  stage?: string;
  /**
   * `'deterministic-only'`: a call that samples (temperature above 0 or topP below 1, an unset temperature
   * included: most providers default to 1) without a `seed` gets an answer of its own; `'always'`: it
   * shares like any other. @default 'deterministic-only'
   */
  share?: SharePolicy;
  /**
   * Calls of different scopes never share an answer: set it to the tenant or the user when answers must not
   * cross them. Models built with different accounts (API key and account headers, base URL) never share
   * where the provider shows them (its `config`, as the `@ai-sdk/*` providers keep it); a model that shows
   * neither needs a scope naming its account. @default ''
   */
  scope?: string;
  /**
   * `true`: a model call nobody waits for any more (every caller's `abortSignal` fired or its stream was
   * cancelled, and no other server waits for it) is cancelled, so the model stops generating. `false`: it
   * finishes and its answer is kept for later callers. @default false
   */
  cancelAbandoned?: boolean;
}

export interface ResolvedFlightMiddlewareOptions {
  flights: SingleFlight;
  stage: string;
  share: SharePolicy;
  scope: string;
  cancelAbandoned: boolean;
}

const OPTION_NAMES = ['flights', 'stage', 'share', 'scope', 'cancelAbandoned'] as const;

function fail(option: string, message: string): never {
  throw new FlightConfigurationError(`flightMiddleware: ${option} ${message}`, { context: { option } });
}

export function resolveOptions(input: FlightMiddlewareOptions): ResolvedFlightMiddlewareOptions {
  assertKnownOptions('flightMiddleware', input, OPTION_NAMES);
  const options = input ?? ({} as FlightMiddlewareOptions);
  const flights = options.flights as Partial<SingleFlight> | undefined;
  if (!flights || typeof flights.execute !== 'function' || typeof flights.executeStream !== 'function')
    fail('flights', 'must be the instance createSingleFlight returned');
  const stage = options.stage ?? 'ai';
  assertStageName(stage);
  const share = options.share ?? 'deterministic-only';
  if (!SHARE_POLICIES.includes(share))
    fail('share', `must be one of ${SHARE_POLICIES.map((s) => `'${s}'`).join(', ')}, got ${JSON.stringify(share)}`);
  const scope = options.scope ?? '';
  if (typeof scope !== 'string' || scope.length > 256) fail('scope', 'must be a string of at most 256 characters');
  const cancelAbandoned = options.cancelAbandoned ?? false;
  if (typeof cancelAbandoned !== 'boolean') fail('cancelAbandoned', `must be true or false, got ${JSON.stringify(cancelAbandoned)}`);
  return { flights: options.flights, stage, share, scope, cancelAbandoned };
}
