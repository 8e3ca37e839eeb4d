/**
 * The first step of a request's life: whether it may be coalesced at all, and under which flight key —
 * the URL's (method, path and query, representation headers, host, identity) or, for an unsafe request
 * under an Idempotency-Key, the key's (host, identity, key) with a fingerprint of the request.
 */
import { buildFlightKey, hashPart, type KeyPart } from '@flight/core';
import { FlightBodyTooLargeError, FlightIdempotencyIdentityRequiredError, FlightIdempotencyKeyMissingError } from './errors.js';
import type { HttpExchange, HttpRequestView } from './exchange.js';
import type { FlightKeySpec, ResolvedHttpFlightOptions } from './options.js';
import { withoutResumeParam } from './resume/resume-request.js';
import {
  canonicalQuery,
  declaredLength,
  hasBody,
  headerValue,
  parsedBodyBytes,
  parseIdempotencyKey,
  requestFingerprint,
  requestHost,
  type HttpRequestInfo,
} from './request.js';

/** A request coalesced under `key`: `fingerprint` for an idempotent one, `conflict` to answer 409 to a duplicate in flight here. */
export interface FlightPlan {
  kind: 'flight';
  key: string;
  fingerprint: string | undefined;
  conflict: boolean;
  stream?: boolean;
}

/** How a request is handled: not coalesced (the handler runs as if the middleware were not there), or a flight. */
export type Plan = { kind: 'bypass' } | FlightPlan;

const BYPASS: Plan = { kind: 'bypass' };

/** A key function's answer, normalized. */
type KeySpec = { parts?: readonly KeyPart[]; identity?: string };

/** The key of a middleware without a `key` function: path and query, no identity (one object for every request). */
const DEFAULT_SPEC: KeySpec = Object.freeze({});

function normalizeSpec(spec: Exclude<FlightKeySpec, null | undefined>): KeySpec {
  if (typeof spec === 'string') return { parts: [spec] };
  if (Array.isArray(spec)) return { parts: spec as readonly KeyPart[] };
  const object = spec as Exclude<FlightKeySpec, string | readonly KeyPart[]>;
  const parts = object.parts === undefined ? undefined : typeof object.parts === 'string' ? [object.parts] : object.parts;
  const identity = object.identity === undefined || object.identity === null ? undefined : String(object.identity);
  return { ...(parts ? { parts } : {}), ...(identity !== undefined ? { identity } : {}) };
}

/** Plans the requests of one middleware instance. */
export class RequestPlanner<Req> {
  /** `stage:http:`, validated once: a coalescing key is this, the method and one digest (all safe key parts). */
  private readonly httpKeyPrefix: string;

  constructor(private readonly options: ResolvedHttpFlightOptions<Req>) {
    this.httpKeyPrefix = `${buildFlightKey(options.stage, ['http'])}:`;
  }

  /**
   * Decides how to handle a request: synchronously for the common case, a promise only when an idempotent
   * request's body has to be read first. Throws (or rejects with) the `FlightHttpError` to answer with.
   */
  plan(exchange: HttpExchange<Req>): Plan | Promise<Plan> {
    const { options } = this;
    const { headers, method } = exchange.request;
    const declared = declaredLength(headers);
    if (declared !== undefined && declared > options.maxRequestBodyBytes) {
      throw new FlightBodyTooLargeError(`request body of ${declared} bytes is above the limit of ${options.maxRequestBodyBytes} bytes`, {
        context: { limit: options.maxRequestBodyBytes, size: declared },
      });
    }
    if (options.idempotency?.methods.has(method)) return this.planIdempotent(exchange, options.idempotency);
    if (!options.methods.has(method)) return BYPASS;
    if (headers.range !== undefined || headers['if-range'] !== undefined) return BYPASS;
    if (!options.key && hasBody(headers)) return BYPASS;
    const key = this.coalescingKey(exchange, method);
    if (key === null) return BYPASS;
    const stream = options.stream && method !== 'HEAD' && exchange.recordStream !== undefined;
    return { kind: 'flight', key, fingerprint: undefined, conflict: false, stream };
  }

  /** The flight key of a coalesced request to this URL under `method`, or null when it would not be coalesced. */
  coalescingKey(view: HttpRequestView<Req>, method: string): string | null {
    const { options } = this;
    const { request } = view;
    const { headers } = request;
    const spec = this.keyOf(view);
    if (spec === null) return null;
    if (spec.identity === undefined) {
      for (const name of options.credentialHeaders) if (headers[name] !== undefined) return null;
    }
    // A resumed request asks for the same stream: the resume parameter is not part of what it asks for.
    const query = withoutResumeParam(request.query, options.resume?.param);
    const parts = spec.parts ?? [request.path, query.length === 0 ? '' : canonicalQuery(query)];
    const vary: (string | null)[] = [];
    for (const name of options.vary) vary.push(headerValue(headers, name) ?? null);
    // One hash of the whole tuple: JSON keeps the parts apart, so no two tuples share a text.
    return `${this.httpKeyPrefix}${method}:${hashPart(JSON.stringify([parts, vary, this.hostOf(headers), spec.identity ?? null]))}`;
  }

  private keyOf(view: HttpRequestView<Req>): KeySpec | null {
    if (!this.options.key) return DEFAULT_SPEC;
    const spec = this.options.key(view.native);
    return spec === null || spec === undefined ? null : normalizeSpec(spec);
  }

  /** The host the request was sent to (`:authority` or `Host`), in the key unless `shareAcrossHosts`. */
  private hostOf(headers: HttpRequestInfo['headers']): string | null {
    return this.options.shareAcrossHosts ? null : requestHost(headers);
  }

  private async planIdempotent(
    exchange: HttpExchange<Req>,
    idempotency: NonNullable<ResolvedHttpFlightOptions<Req>['idempotency']>,
  ): Promise<Plan> {
    const { options } = this;
    const { request } = exchange;
    const { headers, method } = request;
    const raw = headers[idempotency.header];
    if (raw === undefined) {
      if (idempotency.required) throw new FlightIdempotencyKeyMissingError(`${method} ${request.path} requires an Idempotency-Key header`);
      return BYPASS;
    }
    const idempotencyKey = parseIdempotencyKey(request.headerLines(idempotency.header) ?? raw, idempotency.maxKeyLength);
    const parsed = exchange.parsedBody();
    const body =
      parsed !== undefined
        ? parsedBodyBytes(parsed)
        : hasBody(headers)
          ? await exchange.readBody(options.maxRequestBodyBytes)
          : Buffer.alloc(0);
    // Keys are scoped per identity, so one client can never replay another's response by reusing its key.
    // A credentialed request without one is refused, never keyed by its raw credentials: a retry with a
    // refreshed token would run it again.
    const identity = this.keyOf(exchange)?.identity;
    if (identity === undefined) {
      const credential = options.credentialHeaders.find((name) => headers[name] !== undefined);
      if (credential !== undefined) {
        throw new FlightIdempotencyIdentityRequiredError(
          `${method} ${request.path} carries ${credential} but the flight middleware has no identity for it: give key: (req) => ({ identity: <the authenticated user or client> }) so a retry with refreshed credentials finds its first run (or credentialHeaders: [] when the Idempotency-Key alone identifies the client); the request was not run`,
          { context: { credential } },
        );
      }
    }
    return {
      kind: 'flight',
      key: buildFlightKey(options.stage, ['idem', hashPart(JSON.stringify([this.hostOf(headers), identity ?? null, idempotencyKey]))]),
      fingerprint: requestFingerprint(request, body),
      conflict: idempotency.inFlight === 'conflict',
    };
  }
}
