/** The wrapper's options, documented with their defaults and checked in one place (`resolveOptions`). */
import { FlightConfigurationError, type SingleFlight } from '@flight/core';
import { assertKnownOptions, assertStageName } from '@flight/core/adapter';
import { COALESCED_APIS, type CoalescedApi } from './apis.js';
import { SHARE_POLICIES, type SharePolicy } from './sampling.js';

export interface OpenAIFlightOptions {
  /** The single-flight instance (`createSingleFlight`) that makes each call once across the cluster. */
  flights: SingleFlight;
  /** The stage the calls run under (its lease, timeouts, result TTL, guard). @default 'openai' */
  stage?: string;
  /**
   * `'deterministic-only'`: a request that samples (temperature > 0 or top_p < 1, the API's defaults
   * included) without a `seed` gets an answer of its own; `'always'`: it shares like any other.
   * @default 'deterministic-only'
   */
  share?: SharePolicy;
  /**
   * Calls of different scopes never share an answer: set it to the tenant or the user when answers must
   * not cross them. Calls through clients with different base URLs, organizations, projects, API keys, admin
   * keys or account headers (`Authorization`, `api-key`, …, among `defaultHeaders`) never share either way. A
   * client whose credentials come at call time (an `apiKey` function, `workloadIdentity`, a `provider`) shows
   * no account, so it needs a scope naming the account: `withFlights` refuses it without one. @default ''
   */
  scope?: string;
  /** The APIs coalesced; any other method of the client passes through untouched. @default all three */
  apis?: readonly CoalescedApi[];
  /**
   * `true`: a model call nobody waits for any more — every caller of it left (its signal aborted, its
   * stream was dropped before the end) and no other server waits for it — is cancelled, so the model stops
   * generating (and billing). `false`: it finishes and its answer is kept for later callers: a client
   * retrying after its own timeout, or resuming a dropped stream with `after`, gets it without a second
   * call. @default false
   */
  cancelAbandoned?: boolean;
}

export interface ResolvedOpenAIFlightOptions {
  flights: SingleFlight;
  stage: string;
  share: SharePolicy;
  scope: string;
  apis: ReadonlySet<CoalescedApi>;
  cancelAbandoned: boolean;
}

const OPTION_NAMES = ['flights', 'stage', 'share', 'scope', 'apis', 'cancelAbandoned'] as const;

function fail(option: string, message: string): never {
  throw new FlightConfigurationError(`withFlights: ${option} ${message}`, { context: { option } });
}

export function resolveOptions(input: OpenAIFlightOptions): ResolvedOpenAIFlightOptions {
  assertKnownOptions('withFlights', input, OPTION_NAMES);
  const options = input ?? ({} as OpenAIFlightOptions);
  const flights = options.flights as Partial<SingleFlight> | undefined;
  if (!flights || typeof flights.execute !== 'function' || typeof flights.executeStream !== 'function')
    fail('flights', 'must be the instance createSingleFlight returned');
  const stage = options.stage ?? 'openai';
  assertStageName(stage);
  const share = options.share ?? 'deterministic-only';
  if (!SHARE_POLICIES.includes(share))
    fail('share', `must be one of ${SHARE_POLICIES.map((s) => `'${s}'`).join(', ')}, got ${JSON.stringify(share)}`);
  const scope = options.scope ?? '';
  if (typeof scope !== 'string' || scope.length > 256) fail('scope', 'must be a string of at most 256 characters');
  const apis = options.apis ?? COALESCED_APIS;
  if (!Array.isArray(apis) || apis.some((api) => !COALESCED_APIS.includes(api)))
    fail('apis', `must list some of ${COALESCED_APIS.map((a) => `'${a}'`).join(', ')}, got ${JSON.stringify(apis)}`);
  const cancelAbandoned = options.cancelAbandoned ?? false;
  if (typeof cancelAbandoned !== 'boolean') fail('cancelAbandoned', `must be true or false, got ${JSON.stringify(cancelAbandoned)}`);
  return { flights: options.flights, stage, share, scope, apis: new Set(apis), cancelAbandoned };
}
