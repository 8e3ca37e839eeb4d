/**
 * Resolves `@opentelemetry/api`, an optional peer dependency, once and without a static import: when the
 * application has not installed it, @flight/core loads and runs as before and reports nothing.
 */
import { createRequire } from 'node:module';

/** The OpenTelemetry API module (types only; nothing is imported at load time). */
export type OtelApi = typeof import('@opentelemetry/api');

/** Name under which the library's tracer and meter are obtained. */
export const INSTRUMENTATION_NAME = '@flight/core';

let cached: { api: OtelApi | undefined; version: string | undefined } | undefined;

/** Loads a module by name as seen from this package; throws when it is not installed. */
export type ModuleLoader = (id: string) => unknown;

function packageLoader(): ModuleLoader {
  return createRequire(import.meta.url);
}

/**
 * The OpenTelemetry API, or undefined when it is not installed (or fails to load). Resolved once per
 * process unless a `load` function is given (tests).
 */
export function loadOtelApi(load?: ModuleLoader): { api: OtelApi | undefined; version: string | undefined } {
  if (!load && cached) return cached;
  const loader = load ?? packageLoader();
  let api: OtelApi | undefined;
  let version: string | undefined;
  try {
    api = loader('@opentelemetry/api') as OtelApi;
    if (typeof api?.trace?.getTracer !== 'function' || typeof api.metrics?.getMeter !== 'function') api = undefined;
  } catch {
    api = undefined;
  }
  try {
    version = (loader('@flight/core/package.json') as { version?: string }).version;
  } catch {
    version = undefined;
  }
  const resolved = { api, version };
  if (!load) cached = resolved;
  return resolved;
}

/**
 * `@opentelemetry/api` as @flight/core resolved it, or undefined when it is not installed. Typed `unknown`
 * so that no published declaration names the optional peer (a strict program without it would not
 * compile): a package that has the API as its own optional peer casts it to
 * `typeof import('@opentelemetry/api')`.
 */
export function resolvedOtelApi(): unknown {
  return loadOtelApi().api;
}
