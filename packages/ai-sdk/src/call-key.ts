/**
 * The flight key of a model call: everything that can change the answer, and nothing that cannot.
 *
 * - The provider id and the model id the middleware was given (`model.provider`, `model.modelId`).
 * - Every call option, canonically (keys sorted, `undefined` left out): the prompt (files by their bytes
 *   or URL), tools and tool choice, response format, sampling settings, seed, stop sequences, reasoning,
 *   `providerOptions` and the per-call headers — any field this package does not know too, so a new
 *   option never makes two different calls share. Not the abort signal.
 * - Whether it is a `generate` or a `stream` call (their results differ in shape).
 * - The account the model was built with, where the provider shows it: the account headers of its config
 *   (API key, organization, project, …; only a digest) and its base URL. And the middleware's `scope`.
 */
import { buildFlightKey, hashPart } from '@flight/core';
import type { LanguageModelV4, LanguageModelV4CallOptions } from '@ai-sdk/provider';
import { configure } from 'safe-stable-stringify';
import { toWireJson } from './wire-json.js';

const canonical = configure({ deterministic: true, circularValue: Error, bigint: false });

export type CallKind = 'generate' | 'stream';

/** Header names that say on whose account a call is made (an API key, a token, an organization, a project). */
const ACCOUNT_HEADER = /auth|key|token|organization|project|account|cookie|user/i;

/** The config an `@ai-sdk/*` provider keeps on its models: where calls go and with which headers. */
interface ProviderConfig {
  headers?: unknown;
  url?: (options: { modelId: string; path: string }) => string;
  baseURL?: unknown;
}

/** The account headers among `headers` (a plain object or a `Headers`), canonically: names lower-cased, sorted. */
function accountHeaders(headers: unknown): string {
  if (typeof headers !== 'object' || headers === null) return '';
  const entries: [string, unknown][] =
    Symbol.iterator in headers ? [...(headers as Iterable<[string, unknown]>)] : Object.entries(headers as Record<string, unknown>);
  return entries
    .filter(([name, value]) => value !== undefined && ACCOUNT_HEADER.test(name))
    .map(([name, value]) => `${name.toLowerCase()}:${String(value)}`)
    .sort()
    .join('\n');
}

/**
 * A digest of the account a model calls with and where, from its provider config (the `@ai-sdk/*` providers
 * keep `config.headers` — a value or a function, as they load the API key — and `config.url` or
 * `config.baseURL`). '' when the model shows no config: its account is then the middleware's `scope`.
 */
export async function accountOf(model: LanguageModelV4): Promise<string> {
  const config = (model as { config?: ProviderConfig }).config;
  if (typeof config !== 'object' || config === null) return '';
  const headers = typeof config.headers === 'function' ? await (config.headers as () => unknown)() : await config.headers;
  let base = typeof config.baseURL === 'string' ? config.baseURL : '';
  if (typeof config.url === 'function') {
    try {
      base = String(config.url({ modelId: model.modelId, path: '' }));
    } catch {
      // A provider whose url() needs more than the model id: the headers still tell accounts apart.
    }
  }
  return hashPart(`${base}\n${accountHeaders(headers)}`);
}

/** The call options as canonical JSON (the abort signal left out), or undefined when they are not plain data. */
export function canonicalParams(params: LanguageModelV4CallOptions): string | undefined {
  const { abortSignal: _signal, ...rest } = params;
  const json = toWireJson(rest);
  if (json === undefined) return undefined;
  try {
    const text = canonical(json);
    return typeof text === 'string' ? text : undefined;
  } catch {
    return undefined;
  }
}

/** The flight key of a `kind` call of `model` with `params` (see above), or undefined when they are not plain data. */
export function callKey(
  stage: string,
  kind: CallKind,
  model: Pick<LanguageModelV4, 'provider' | 'modelId'>,
  account: string,
  scope: string,
  params: LanguageModelV4CallOptions,
): string | undefined {
  const body = canonicalParams(params);
  if (body === undefined) return undefined;
  return buildFlightKey(stage, [kind, model.provider, model.modelId, account, scope, hashPart(body)]);
}
