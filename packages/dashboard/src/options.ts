/**
 * The dashboard's options: documented with their defaults, resolved and checked in one place
 * (`resolveDashboardOptions`), so a typo or a wrong value fails where the dashboard is created.
 */
import { FlightConfigurationError, type SingleFlight } from '@flight/core';
import { assertKnownOptions, assertStageName, type FlightStatus } from '@flight/core/adapter';

/** One flight the coordinator shares, as an inspector lists it (the fields the dashboard shows). */
export interface SharedFlightListing {
  stage: string;
  /** The flight's hash tag: a digest of stage and key (the key itself is not in Redis). */
  digest: string;
  status: FlightStatus;
  epoch: number;
  takeovers: number;
  ageMs: number;
  /** The owner's node name (never its token). */
  owner: string;
  heartbeatAgeMs?: number;
  followers: number;
  expiresInMs: number;
}

/**
 * Lists the flights a coordinator shares across the cluster. `RedisCoordinator` (`@flight/redis-ioredis`,
 * `@flight/redis-node`) is one: pass the coordinator itself.
 */
export interface FlightLister {
  listFlights(options: { stage: string; limit?: number }): Promise<readonly SharedFlightListing[]>;
}

export interface FlightDashboardOptions {
  /** This node's single-flight instance: its events feed the counters, durations and events. */
  singleFlight: SingleFlight;
  /**
   * The coordinator, to list the flights in progress across the whole cluster (read with `SCAN` and `GET`;
   * nothing is written). Without it the page shows this node's flights only.
   */
  inspector?: FlightLister;
  /** Stages whose cluster-wide flights are listed; stages this node has seen are added. @default [] */
  stages?: readonly string[];
  /**
   * Base URLs of the other nodes' dashboards, as this node reaches them (`http://10.0.0.7:3000/flight`):
   * the page shows every node's mode and counters, the savings of the whole cluster, and a node that does
   * not answer as unreachable. @default []
   */
  peers?: readonly string[];
  /**
   * Headers sent with each request to a peer, for peers mounted behind authentication
   * (`{ authorization: 'Bearer …' }`), or a function of the peer's URL that returns them (called on every
   * refresh, so a short-lived token can be renewed). @default none
   */
  peerHeaders?: PeerHeaders;
  /**
   * The `fetch` peers are asked with: one with a client certificate, a proxy or an undici dispatcher of
   * yours. @default globalThis.fetch
   */
  peerFetch?: typeof fetch;
  /**
   * `false` adds a form to forget a flight cluster-wide (`POST <mount>/forget`, JSON only). Mount the
   * dashboard behind your authentication either way: it shows request keys. @default true
   */
  readOnly?: boolean;
  /** The page's title. @default 'flight' */
  title?: string;
  /** Width of one bar of the savings chart (ms). @default 10000 */
  bucketMs?: number;
  /** Bars kept in the savings chart (history = bucketMs × buckets). @default 60 */
  buckets?: number;
  /** How long the page's refresh waits for one peer (ms). @default 500 */
  peerTimeoutMs?: number;
  /** At most this many cluster-wide flights listed per stage. @default 50 */
  listLimit?: number;
  /** How often the page is refreshed while open (ms). @default 1000 */
  refreshMs?: number;
}

/** Headers for the requests to peers, or a function of the peer's base URL that returns them. */
export type PeerHeaders = Record<string, string> | ((peerUrl: string) => Record<string, string> | Promise<Record<string, string>>);

export interface ResolvedDashboardOptions {
  singleFlight: SingleFlight;
  inspector: FlightLister | undefined;
  stages: readonly string[];
  peers: readonly string[];
  peerHeaders: (peerUrl: string) => Record<string, string> | Promise<Record<string, string>>;
  peerFetch: typeof fetch;
  readOnly: boolean;
  title: string;
  bucketMs: number;
  buckets: number;
  peerTimeoutMs: number;
  listLimit: number;
  refreshMs: number;
}

const OPTION_NAMES = [
  'singleFlight',
  'inspector',
  'stages',
  'peers',
  'peerHeaders',
  'peerFetch',
  'readOnly',
  'title',
  'bucketMs',
  'buckets',
  'peerTimeoutMs',
  'listLimit',
  'refreshMs',
] as const;

function fail(option: string, message: string): never {
  throw new FlightConfigurationError(`createFlightDashboard: ${option} ${message}`, { context: { option } });
}

function integer(option: string, value: number | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > max)
    fail(option, `must be an integer from ${min} to ${max}, got ${String(value)}`);
  return value;
}

function peerUrl(value: unknown): string {
  let url: URL | undefined;
  try {
    url = typeof value === 'string' ? new URL(value) : undefined;
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) fail('peers', `must be http(s) URLs, got ${JSON.stringify(value)}`);
  return url.href.replace(/\/+$/, '');
}

function peerHeaders(value: unknown): ResolvedDashboardOptions['peerHeaders'] {
  if (value === undefined) return () => ({});
  if (typeof value === 'function') return value as ResolvedDashboardOptions['peerHeaders'];
  if (typeof value !== 'object' || value === null || Object.values(value).some((v) => typeof v !== 'string'))
    fail('peerHeaders', 'must be an object of header names to strings, or a function of the peer URL that returns one');
  const headers = { ...(value as Record<string, string>) };
  return () => headers;
}

export function resolveDashboardOptions(input: FlightDashboardOptions): ResolvedDashboardOptions {
  assertKnownOptions('createFlightDashboard', input, OPTION_NAMES);
  const options = input ?? ({} as FlightDashboardOptions);
  const flight = options.singleFlight as Partial<SingleFlight> | undefined;
  if (!flight || typeof flight.on !== 'function' || typeof flight.forget !== 'function')
    fail('singleFlight', 'must be the instance createSingleFlight returned');
  if (options.inspector !== undefined && typeof options.inspector?.listFlights !== 'function')
    fail('inspector', 'must have listFlights (pass a RedisCoordinator)');
  const stages = [...(options.stages ?? [])];
  for (const stage of stages) assertStageName(stage);
  if (options.readOnly !== undefined && typeof options.readOnly !== 'boolean') fail('readOnly', 'must be a boolean');
  if (options.peerFetch !== undefined && typeof options.peerFetch !== 'function') fail('peerFetch', 'must be a fetch function');
  if (options.title !== undefined && (typeof options.title !== 'string' || options.title.length > 200))
    fail('title', 'must be a string of at most 200 characters');
  return {
    singleFlight: options.singleFlight,
    inspector: options.inspector,
    stages,
    peers: (options.peers ?? []).map(peerUrl),
    peerHeaders: peerHeaders(options.peerHeaders),
    peerFetch: options.peerFetch ?? ((input, init) => fetch(input, init)),
    readOnly: options.readOnly ?? true,
    title: options.title ?? 'flight',
    bucketMs: integer('bucketMs', options.bucketMs, 10_000, 100, 3_600_000),
    buckets: integer('buckets', options.buckets, 60, 2, 1000),
    peerTimeoutMs: integer('peerTimeoutMs', options.peerTimeoutMs, 500, 1, 60_000),
    listLimit: integer('listLimit', options.listLimit, 50, 1, 1000),
    refreshMs: integer('refreshMs', options.refreshMs, 1000, 50, 60_000),
  };
}
