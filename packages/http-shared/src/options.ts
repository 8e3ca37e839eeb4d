/**
 * Options of the HTTP middleware, documented with their defaults and resolved in one place
 * (`resolveHttpFlightOptions`). Both adapters take the same options; only the type of the request
 * given to `key` differs.
 */
import { FlightConfigurationError, type KeyPart, type SingleFlight } from '@flight/core';
import { assertKnownOptions, assertStageName } from '@flight/core/adapter';

/** What a key function returns: the parts that identify the logical request, and whose response it is. */
export type FlightKeySpec =
  | string
  | readonly KeyPart[]
  | {
      /** Parts replacing the default path + query part. @default path and canonical query */
      parts?: string | readonly KeyPart[];
      /**
       * Who the response is for (a user or tenant id). Required to coalesce requests that carry a
       * credential header (`credentialHeaders`): requests with different identities never share a response.
       */
      identity?: string | number;
    };

export interface IdempotencyOptions {
  /** Request header holding the key. @default 'idempotency-key' */
  header?: string;
  /** Answer 400 when an idempotent method arrives without the header; `false` runs it uncoordinated. @default true */
  required?: boolean;
  /** Methods handled by idempotency mode. @default ['POST', 'PUT', 'PATCH', 'DELETE'] */
  methods?: readonly string[];
  /** Longest key accepted (in characters); longer keys get 400. @default 255 */
  maxKeyLength?: number;
  /**
   * A duplicate that arrives while the first request is still running: `'wait'` for its result, or
   * get `409 Conflict` at once (the IETF draft's behaviour). @default 'wait'
   */
  inFlight?: 'wait' | 'conflict';
}

export interface HttpFlightOptions<Req> {
  /** The single-flight instance (in-memory, or distributed over Redis). Required. */
  singleFlight: SingleFlight;
  /** The stage whose policy (timeouts, result TTL, L1) governs these requests. Required. */
  stage: string;
  /**
   * Computes the logical request. Return `null`/`undefined` to not coalesce this request. The
   * method and the `vary` headers are always part of the key; the identity is too when given.
   * @default method + path + canonical query + vary headers; credentialed requests are not coalesced
   */
  key?: (req: Req) => FlightKeySpec | null | undefined;
  /**
   * Methods coalesced outside idempotency mode. Methods other than GET and HEAD need a `key` function,
   * and unsafe methods (POST, PUT, PATCH, DELETE…) are refused here: use `idempotency`.
   * @default ['GET', 'HEAD']
   */
  methods?: readonly string[];
  /** Statuses whose responses are shared. @default every 2xx */
  shareStatuses?: readonly number[] | ((status: number) => boolean);
  /**
   * When the owner's response is not shared because of its status: followers `'run'` the handler
   * themselves, or `'fail'` with the owner's status (a problem+json body). Idempotent requests always
   * `'fail'` (they are never run twice). Responses not shared for other reasons (size, `private`,
   * `Vary`) always let followers run the handler. @default 'run'
   */
  onUnshareable?: 'run' | 'fail';
  /** Largest response body shared; above it the owner streams on and followers run the handler. @default 1 MiB */
  maxBodyBytes?: number;
  /** Largest request body accepted (declared `Content-Length`, or counted when read); above it 413. @default 1 MiB */
  maxRequestBodyBytes?: number;
  /**
   * Response headers replayed to followers. `Set-Cookie`, authentication and hop-by-hop headers can
   * never be listed. @default content-type, content-language, content-encoding, content-disposition,
   * cache-control, etag, last-modified, expires, vary, link, location
   */
  replayHeaders?: readonly string[];
  /**
   * Extra request headers that change the representation, added to the key. Always in the key:
   * accept, accept-encoding, accept-language, x-forwarded-host, x-forwarded-proto. (`Range` and
   * `If-Range` requests are never coalesced.) @default []
   */
  vary?: readonly string[];
  /** Idempotency-Key mode (IETF httpapi draft) for unsafe methods. `true` for the defaults. @default off */
  idempotency?: boolean | IdempotencyOptions;
  /** Response header telling how the response was obtained; `false` to omit it. @default 'x-flight-role' */
  roleHeader?: string | false;
  /**
   * Serve a shared response past its freshness as its `Cache-Control` allows (RFC 5861), once per cluster:
   * within `stale-while-revalidate=N` every request gets it at once (role `stale`, with `Age`) while one
   * request's handler refreshes it; within `stale-if-error=N` it answers in place of a failed refresh
   * (a status not shared, a handler error). `s-maxage` / `max-age` is the fresh time; `must-revalidate`,
   * `proxy-revalidate` and `no-cache` forbid serving it stale. Needs a single-flight that serves stale values
   * (`SingleFlight.servesStale`: a coordinator that keeps stale copies, or local mode), else a
   * `FlightConfigurationError`. Off, those directives are not honoured: a response is replayed only while
   * fresh. Streamed routes and Idempotency-Key replays are never served stale. @default false
   */
  serveStale?: boolean;
  /**
   * After a run whose response is of a kind never shared (`private`, `no-store`, `Vary: *`, a
   * body too large or unrecordable), requests with its key run the handler at once for this long, each its
   * own, instead of waiting behind a new run only to learn the same (Varnish's hit-for-pass): the burst
   * after such a response costs one handler latency, not two. Error statuses are not held (the next burst
   * shares one run again). `0` turns it off. @default 1000
   */
  holdUnshareableMs?: number;
  /**
   * Request headers that carry credentials. A request with any of them is not coalesced unless `key`
   * gives an `identity`; under an Idempotency-Key, their values scope the key (one client can never get
   * another's response by reusing its key).
   * @default ['authorization', 'proxy-authorization', 'cookie', 'x-api-key', 'x-auth-token']
   */
  credentialHeaders?: readonly string[];
  /**
   * Let requests for different `Host`s share a response. Off by default: virtual hosts and tenants
   * served by one route never see each other's responses.
   * @default false
   */
  shareAcrossHosts?: boolean;
  /**
   * Coalesce this route's responses as streams (`SingleFlight.executeStream`): for Server-Sent Events
   * (`text/event-stream`) and other bodies written in pieces. Every caller gets the owner's status and
   * headers, then each piece as the owner's handler writes it; a caller that joins late catches up from the
   * first piece; after completion the stored pieces replay. The same sharing rules apply (decided on the
   * head). `HEAD` and idempotency-mode requests are buffered as without it. Off: a response is shared
   * once complete, in one piece.
   * @default false
   */
  stream?: boolean;
  /**
   * Streamed Server-Sent Events that survive a reconnect (needs `stream: true`). Every event a caller
   * receives carries an `id:` that names the flight, the run and the event's position, the same on every
   * node. A request that comes back with `Last-Event-ID` (the header browsers send when an `EventSource`
   * reconnects, or the `param` query parameter for clients that cannot set it) continues after that event
   * on any node: joining the run live, or from the stored events once it completed. A run replaced since
   * (its owner died) continues with a `flight-restart` event and the new run from its first event. An id
   * of another flight (another user, another URL) is answered 409 `E_FLIGHT_HTTP_RESUME_MISMATCH`, an id
   * that is not one of ours 400; an id whose run and stored events are gone 410
   * `E_FLIGHT_HTTP_RESUME_EXPIRED` (`expired: 'gone'`), or, with `expired: 'restart'`, a new run
   * (`flight-restart`, then its events). `true` takes the defaults.
   * @default false
   */
  resume?: boolean | ResumeOptions;
}

export interface ResumeOptions {
  /** What a resume whose run and events are gone gets: 410 (`'gone'`), or a new run (`'restart'`). @default 'gone' */
  expired?: 'gone' | 'restart';
  /** The query parameter carrying the last event id (left out of the flight key); `false`: header only. @default 'lastEventId' */
  param?: string | false;
}

export interface ResolvedResume {
  expired: 'gone' | 'restart';
  param: string | undefined;
}

export interface ResolvedIdempotency {
  header: string;
  required: boolean;
  methods: ReadonlySet<string>;
  maxKeyLength: number;
  inFlight: 'wait' | 'conflict';
}

export interface ResolvedHttpFlightOptions<Req> {
  singleFlight: SingleFlight;
  stage: string;
  key: ((req: Req) => FlightKeySpec | null | undefined) | undefined;
  methods: ReadonlySet<string>;
  shareStatus: (status: number) => boolean;
  onUnshareable: 'run' | 'fail';
  maxBodyBytes: number;
  maxRequestBodyBytes: number;
  replayHeaders: ReadonlySet<string>;
  vary: readonly string[];
  idempotency: ResolvedIdempotency | undefined;
  roleHeader: string | undefined;
  serveStale: boolean;
  holdUnshareableMs: number;
  credentialHeaders: readonly string[];
  shareAcrossHosts: boolean;
  stream: boolean;
  resume: ResolvedResume | undefined;
}

export const DEFAULT_CREDENTIAL_HEADERS = ['authorization', 'proxy-authorization', 'cookie', 'x-api-key', 'x-auth-token'] as const;

export const DEFAULT_REPLAY_HEADERS = [
  'content-type',
  'content-language',
  'content-encoding',
  'content-disposition',
  'cache-control',
  'etag',
  'last-modified',
  'expires',
  'vary',
  'link',
  'location',
] as const;

/** Request headers that always select the representation, hence always part of the key. */
export const REPRESENTATION_HEADERS = ['accept', 'accept-encoding', 'accept-language', 'x-forwarded-host', 'x-forwarded-proto'] as const;

/** Response headers that are per user, per connection or recomputed: never replayed. */
export const NEVER_REPLAYED = new Set([
  'set-cookie',
  'set-cookie2',
  'authorization',
  'www-authenticate',
  'proxy-authenticate',
  'authentication-info',
  'proxy-authentication-info',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'content-length',
  'date',
  'age',
]);

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'QUERY']);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const MIB = 1024 * 1024;

function fail(message: string): never {
  throw new FlightConfigurationError(`flight middleware: ${message}`);
}

/** The option names `HttpFlightOptions` documents (anything else is a typo, refused). */
export const HTTP_OPTION_NAMES: readonly (keyof HttpFlightOptions<unknown>)[] = [
  'singleFlight',
  'stage',
  'key',
  'methods',
  'shareStatuses',
  'onUnshareable',
  'maxBodyBytes',
  'maxRequestBodyBytes',
  'replayHeaders',
  'vary',
  'idempotency',
  'roleHeader',
  'serveStale',
  'holdUnshareableMs',
  'credentialHeaders',
  'shareAcrossHosts',
  'stream',
  'resume',
];
const IDEMPOTENCY_OPTION_NAMES: readonly (keyof IdempotencyOptions)[] = ['header', 'required', 'methods', 'maxKeyLength', 'inFlight'];

function sizeOption(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value <= 0) fail(`${name} must be a positive integer, got ${value}`);
  return value;
}

function headerList(name: string, values: readonly string[]): string[] {
  if (!Array.isArray(values)) fail(`${name} must be an array of header names`);
  return values.map((value) => {
    if (typeof value !== 'string' || !HEADER_NAME.test(value)) fail(`${name}: invalid header name ${JSON.stringify(value)}`);
    return value.toLowerCase();
  });
}

function methodList(name: string, values: readonly string[]): string[] {
  if (!Array.isArray(values) || values.length === 0) fail(`${name} must be a non-empty array of methods`);
  return values.map((value) => {
    if (typeof value !== 'string' || !HEADER_NAME.test(value)) fail(`${name}: invalid method ${JSON.stringify(value)}`);
    return value.toUpperCase();
  });
}

/** Applies every default and validates; throws `FlightConfigurationError` (a `FlightValidationError`) on a bad option. */
export function resolveHttpFlightOptions<Req>(options: HttpFlightOptions<Req>): ResolvedHttpFlightOptions<Req> {
  if (!options || typeof options !== 'object') fail('options are required');
  assertKnownOptions('flight middleware', options, HTTP_OPTION_NAMES);
  if (typeof options.idempotency === 'object')
    assertKnownOptions('flight middleware: idempotency', options.idempotency, IDEMPOTENCY_OPTION_NAMES);
  const { singleFlight } = options;
  if (!singleFlight || typeof singleFlight.execute !== 'function') fail('singleFlight must be a SingleFlight instance');
  assertStageName(options.stage);
  if (options.key !== undefined && typeof options.key !== 'function') fail('key must be a function');

  const methods = methodList('methods', options.methods ?? ['GET', 'HEAD']);
  for (const method of methods) {
    if (!SAFE_METHODS.has(method)) {
      fail(`${method} is not a safe method: unsafe methods are never coalesced without an idempotency key (use the idempotency option)`);
    }
    if (method !== 'GET' && method !== 'HEAD' && !options.key) fail(`coalescing ${method} needs an explicit key function`);
  }

  let shareStatus: (status: number) => boolean;
  const statuses = options.shareStatuses;
  if (statuses === undefined) shareStatus = (status) => status >= 200 && status < 300;
  else if (typeof statuses === 'function') shareStatus = statuses;
  else if (Array.isArray(statuses)) {
    for (const status of statuses)
      if (!Number.isInteger(status) || status < 100 || status > 599) fail(`shareStatuses: invalid status ${status}`);
    const set = new Set(statuses);
    shareStatus = (status) => set.has(status);
  } else fail('shareStatuses must be an array of statuses or a function');

  const onUnshareable = options.onUnshareable ?? 'run';
  if (onUnshareable !== 'run' && onUnshareable !== 'fail') fail(`onUnshareable must be 'run' or 'fail', got ${String(onUnshareable)}`);

  const replayHeaders = headerList('replayHeaders', options.replayHeaders ?? DEFAULT_REPLAY_HEADERS);
  for (const header of replayHeaders) if (NEVER_REPLAYED.has(header)) fail(`replayHeaders: ${header} is never replayed`);

  const vary = [...new Set([...REPRESENTATION_HEADERS, ...headerList('vary', options.vary ?? [])])];

  let idempotency: ResolvedIdempotency | undefined;
  if (options.idempotency) {
    const input: IdempotencyOptions = options.idempotency === true ? {} : options.idempotency;
    const inFlight = input.inFlight ?? 'wait';
    if (inFlight !== 'wait' && inFlight !== 'conflict') fail(`idempotency.inFlight must be 'wait' or 'conflict'`);
    const idemMethods = methodList('idempotency.methods', input.methods ?? ['POST', 'PUT', 'PATCH', 'DELETE']);
    for (const method of idemMethods) if (SAFE_METHODS.has(method)) fail(`idempotency.methods: ${method} is a safe method`);
    idempotency = {
      header: headerList('idempotency.header', [input.header ?? 'idempotency-key'])[0]!,
      required: input.required ?? true,
      methods: new Set(idemMethods),
      maxKeyLength: sizeOption('idempotency.maxKeyLength', input.maxKeyLength, 255),
      inFlight,
    };
  }

  const roleHeader = options.roleHeader === false ? undefined : headerList('roleHeader', [options.roleHeader ?? 'x-flight-role'])[0];

  const serveStale = options.serveStale ?? false;
  if (typeof serveStale !== 'boolean') fail('serveStale must be a boolean');
  if (serveStale && !singleFlight.servesStale)
    fail('serveStale needs a single-flight that serves stale values (a coordinator that keeps stale copies, or local mode)');

  const holdUnshareableMs = options.holdUnshareableMs ?? 1000;
  if (!Number.isInteger(holdUnshareableMs) || holdUnshareableMs < 0)
    fail(`holdUnshareableMs must be an integer of 0 or more, got ${String(holdUnshareableMs)}`);

  const credentialHeaders = headerList('credentialHeaders', options.credentialHeaders ?? DEFAULT_CREDENTIAL_HEADERS);
  if (options.shareAcrossHosts !== undefined && typeof options.shareAcrossHosts !== 'boolean') fail('shareAcrossHosts must be a boolean');
  if (options.stream !== undefined && typeof options.stream !== 'boolean') fail('stream must be a boolean');
  const resume = resolveResume(options.resume, options.stream ?? false);

  return {
    singleFlight,
    stage: options.stage,
    key: options.key,
    methods: new Set(methods),
    shareStatus,
    onUnshareable,
    maxBodyBytes: sizeOption('maxBodyBytes', options.maxBodyBytes, MIB),
    maxRequestBodyBytes: sizeOption('maxRequestBodyBytes', options.maxRequestBodyBytes, MIB),
    replayHeaders: new Set(replayHeaders),
    vary,
    idempotency,
    roleHeader,
    serveStale,
    holdUnshareableMs,
    credentialHeaders: [...new Set(credentialHeaders)],
    shareAcrossHosts: options.shareAcrossHosts ?? false,
    stream: options.stream ?? false,
    resume,
  };
}

const RESUME_OPTION_NAMES: readonly (keyof ResumeOptions)[] = ['expired', 'param'];

function resolveResume(input: boolean | ResumeOptions | undefined, stream: boolean): ResolvedResume | undefined {
  if (input === undefined || input === false) return undefined;
  if (input !== true) assertKnownOptions('flight middleware: resume', input, RESUME_OPTION_NAMES);
  if (!stream) fail('resume needs stream: true (it resumes streamed Server-Sent Events)');
  const { expired = 'gone', param = 'lastEventId' } = input === true ? {} : input;
  if (expired !== 'gone' && expired !== 'restart') fail(`resume.expired must be 'gone' or 'restart', got ${JSON.stringify(expired)}`);
  if (param !== false && (typeof param !== 'string' || !/^[\w.-]{1,64}$/.test(param)))
    fail(`resume.param must be a query parameter name or false, got ${JSON.stringify(param)}`);
  return { expired, param: param === false ? undefined : param };
}
