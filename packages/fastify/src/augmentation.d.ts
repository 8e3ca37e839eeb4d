/**
 * What `@flight/fastify` adds to Fastify's types: `config.flight` on routes, and the `singleFlight` and
 * `purgeFlight` decorators. One declaration file, referenced by both the ESM and the CJS declarations of
 * the package: declared twice (once per format, each with its own `SingleFlight`), a program that has
 * both `.mts` and `.cts` files would see two different types for one property (TS2717).
 */
import type { SingleFlight } from '@flight/core';
import type { FastifyRequest } from 'fastify';
import type { FastifyFlightRouteConfig } from './index.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Coalesce this route with `@flight/fastify` (the plugin must be registered in its scope). */
    flight?: FastifyFlightRouteConfig;
  }
  interface FastifyInstance {
    /** The single-flight instance given to `@flight/fastify` (its first registration in this scope). */
    singleFlight: SingleFlight;
    /**
     * Forgets, cluster-wide, the flights a request to the same URL as `request` would be coalesced under
     * on a route with `config.flight` = `flight` (GET and HEAD by default, whatever `request`'s own method,
     * e.g. `PURGE`), with the same key, identity and `vary` headers: the next such request runs its handler
     * again. Options are the first registration's in this scope, as for `singleFlight`. Resolves `true` when
     * a flight was found. @default flight `true` (the plugin's options)
     */
    purgeFlight(request: FastifyRequest, flight?: FastifyFlightRouteConfig): Promise<boolean>;
  }
}

export {};
