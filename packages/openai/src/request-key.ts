/**
 * The flight key of a model call: everything that can change the answer, and nothing that cannot.
 *
 * - The whole request body, canonically (keys sorted, `undefined` left out): model, messages or input,
 *   tools and tool choice, response format, sampling parameters, seed, `stream` and its options — and any
 *   field this package does not know, so a new parameter never makes two different requests share.
 * - The API called (chat completions, responses, embeddings).
 * - Who is asking whom: the client's base URL, organization, project and a digest of its API key (two
 *   accounts or two providers never share), and the wrapper's `scope` (a tenant, a user).
 * - Of the per-call request options, those that say where a call goes and on whose account: the account
 *   headers (`Authorization`, `api-key`, `x-api-key`, `OpenAI-Organization`, `OpenAI-Project`), `query`,
 *   `path` and `defaultBaseURL`. Not the others (timeout, retries, other headers, idempotency key,
 *   signal): they change how the call is made, not its answer.
 */
import { buildFlightKey, hashPart } from '@flight/core';
import { configure } from 'safe-stable-stringify';
import type { CoalescedApi } from './apis.js';

const canonical = configure({ deterministic: true, circularValue: Error, bigint: true });

/** Plain JSON only: a file, a stream, a Date or a class instance could differ where its JSON does not. */
function isPlainJson(value: unknown, depth = 0): boolean {
  if (depth > 64) return false;
  if (value === null || value === undefined || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every((item) => isPlainJson(item, depth + 1));
  if (typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  return Object.values(value).every((item) => isPlainJson(item, depth + 1));
}

/** The parts of an OpenAI client that say where its calls go and on whose account. */
export interface ClientIdentity {
  baseURL?: string;
  organization?: string | null;
  project?: string | null;
  apiKey?: string | null | (() => Promise<string>);
  adminAPIKey?: string | null;
  /** The options the client was made with (the SDK keeps them): how its credentials are obtained. */
  _options?: { apiKey?: unknown; workloadIdentity?: unknown; provider?: unknown; defaultHeaders?: unknown };
}

/** Default headers that say on whose account a call is made (a proxy's key, an organization, a project). */
const ACCOUNT_HEADERS = new Set(['authorization', 'api-key', 'x-api-key', 'openai-organization', 'openai-project']);

/** The account headers among a client's default headers or a call's headers, canonically (names lower-cased, sorted). */
function accountHeaders(headers: unknown): string {
  if (typeof headers !== 'object' || headers === null) return '';
  // `Headers` and arrays of [name, value] are iterables of pairs; a plain object maps names to values.
  const entries: [string, unknown][] =
    Symbol.iterator in headers ? [...(headers as Iterable<[string, unknown]>)] : Object.entries(headers as Record<string, unknown>);
  return entries
    .map(([name, value]) => [name.toLowerCase(), String(value)] as const)
    .filter(([name]) => ACCOUNT_HEADERS.has(name))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => `${name}:${value}`)
    .join('\n');
}

/**
 * True when the client's account is only known at call time: an `apiKey` function (a rotating token, Azure
 * AD), `workloadIdentity`, or a `provider`. Nothing in the client then tells two accounts apart.
 */
export function hasCallTimeCredentials(client: ClientIdentity): boolean {
  const options = client._options ?? {};
  return typeof options.apiKey === 'function' || options.workloadIdentity != null || options.provider != null;
}

/**
 * A digest of where a client's calls go and on whose account: its base URL, organization, project, API key
 * and admin key, and the account headers among its default headers (keys are never in the flight key in
 * clear). A client whose credentials come at call time has no key here: its account is the wrapper's
 * `scope`, which `withFlights` then requires.
 */
export function clientDigest(client: ClientIdentity): string {
  const key = !hasCallTimeCredentials(client) && typeof client.apiKey === 'string' ? client.apiKey : '';
  const admin = typeof client.adminAPIKey === 'string' ? client.adminAPIKey : '';
  const headers = accountHeaders(client._options?.defaultHeaders);
  return hashPart(
    [client.baseURL ?? '', client.organization ?? '', client.project ?? '', hashPart(key), hashPart(admin), hashPart(headers)].join('\n'),
  );
}

/** The body as canonical JSON, or undefined when it is not plain JSON (a file upload, a cycle). */
export function canonicalBody(body: unknown): string | undefined {
  if (!isPlainJson(body)) return undefined;
  try {
    const text = canonical(body);
    return typeof text === 'string' ? text : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A digest of the per-call request options that say where the call goes and on whose account (see above):
 * '' when the call sets none, undefined when they are not plain JSON (the call is then not shared).
 */
export function callTarget(request: Record<string, unknown> | undefined): string | undefined {
  if (!request) return '';
  const headers = accountHeaders(request.headers);
  const { query, path, defaultBaseURL } = request;
  if (headers === '' && query === undefined && path === undefined && defaultBaseURL === undefined) return '';
  const target = canonicalBody({ query, path, defaultBaseURL });
  return target === undefined ? undefined : hashPart(`${headers}\n${target}`);
}

/**
 * The flight key of a call of `api` with `body` (canonical JSON), by `client` within `scope`, with the
 * digest of its per-call target (`callTarget`; '' for none).
 */
export function requestKey(stage: string, api: CoalescedApi, client: string, scope: string, body: string, target = ''): string {
  const parts = [api, client, scope, hashPart(body)];
  return buildFlightKey(stage, target === '' ? parts : [...parts, target]);
}
