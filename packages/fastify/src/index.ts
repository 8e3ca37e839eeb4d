// One declaration of the Fastify augmentation for both formats (see augmentation.d.ts); the build ships it beside them.
// eslint-disable-next-line @typescript-eslint/triple-slash-reference
/// <reference path="./augmentation.d.ts" />
/**
 * `@flight/fastify`: a Fastify 4/5 plugin that coalesces identical concurrent requests across a cluster
 * with distributed single-flight. A thin binding of Fastify over the shared HTTP handler: routes opt in
 * through their `config.flight`; the plugin wraps their handler (an `onRoute` hook) and adds a route-level
 * `preParsing` hook that enforces the request body limit before Fastify parses the body.
 */
import { FlightConfigurationError, type SingleFlight } from '@flight/core';
import { assertKnownOptions, assertStageName } from '@flight/core/adapter';
import type { FastifyInstance, FastifyPluginCallback, FastifyRequest, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { createHttpFlightHandler, HTTP_OPTION_NAMES, resolveHttpFlightOptions, type HttpFlightOptions } from '@flight/http-shared';
import { bodyLimitHook } from './body-limit.js';
import { FastifyExchange, fastifyRequestView, type RouteHandler } from './exchange.js';

export * from '@flight/http-shared/public';

/** The options of one coalesced route (those of the Express and Koa middleware); `key` receives the Fastify request. */
export type FastifyFlightOptions = HttpFlightOptions<FastifyRequest>;

/**
 * Options of the plugin: the single-flight instance, plus defaults for every route of its scope (any
 * route option; a route's own `config.flight` overrides them).
 */
export type FastifyFlightPluginOptions = { singleFlight: SingleFlight } & Partial<Omit<FastifyFlightOptions, 'singleFlight'>>;

/**
 * A route's `config.flight`: `true` (the plugin's options), a stage name, or route options merged over the
 * plugin's. `false` or absent: the route is not coalesced.
 */
export type FastifyFlightRouteConfig = boolean | string | Partial<Omit<FastifyFlightOptions, 'singleFlight'>>;

/** The options of a route, or `undefined` when it does not opt in. */
function routeOptions(plugin: FastifyFlightPluginOptions, config: FastifyFlightRouteConfig | undefined): FastifyFlightOptions | undefined {
  if (config === undefined || config === false) return undefined;
  if (config === true) return plugin as FastifyFlightOptions;
  if (typeof config === 'string') return { ...plugin, stage: config };
  return { ...plugin, ...config } as FastifyFlightOptions;
}

/**
 * The registration that governs a scope, set on the instance it is registered in: child scopes inherit it
 * (their instances derive from their parent's), and a registration in a child scope replaces it there.
 */
const kRegistration = Symbol('@flight/fastify registration');
type Scope = FastifyInstance & { [kRegistration]?: object };

/** Wraps a route's handler: the shared handler decides, per request, to run it (recorded), replay or answer. */
function coalesce(options: FastifyFlightOptions, handler: RouteHandler): RouteHandler {
  const handle = createHttpFlightHandler<FastifyRequest>(options);
  return async function flightHandler(this: FastifyInstance, request, reply) {
    await handle(new FastifyExchange(this, handler, request, reply));
    // Settles once the response went out (a Reply is thenable): Fastify then sends nothing more.
    return reply;
  };
}

function withHook<T>(current: T | T[] | undefined, hook: T): T[] {
  return current === undefined ? [hook] : Array.isArray(current) ? [...current, hook] : [current, hook];
}

/** What Fastify itself passes to a plugin beside its own options (`register(plugin, { prefix })`). */
const FASTIFY_REGISTER_OPTIONS = ['prefix', 'logLevel', 'logSerializers'];

/** Checks the plugin's options when it is registered: a missing `singleFlight` or a typo fails `register`. */
function checkPluginOptions(options: FastifyFlightPluginOptions): void {
  assertKnownOptions('fastifyFlight', options, [...HTTP_OPTION_NAMES, ...FASTIFY_REGISTER_OPTIONS]);
  if (!options || typeof options.singleFlight?.execute !== 'function') {
    throw new FlightConfigurationError('fastifyFlight: register it with { singleFlight } (what createSingleFlight returns)', {
      context: { option: 'singleFlight' },
    });
  }
  if (options.stage !== undefined) assertStageName(options.stage);
}

const flightPlugin: FastifyPluginCallback<FastifyFlightPluginOptions> = (fastify, options, done) => {
  try {
    checkPluginOptions(options);
  } catch (error) {
    // Through `done`: `register` (and `ready`) rejects with it.
    done(error as Error);
    return;
  }
  if (!fastify.hasDecorator('singleFlight')) fastify.decorate('singleFlight', options.singleFlight);
  if (!fastify.hasDecorator('purgeFlight')) {
    fastify.decorate('purgeFlight', async function purgeFlight(request: FastifyRequest, flight: FastifyFlightRouteConfig = true) {
      const resolved = routeOptions(options, flight);
      if (!resolved) return false;
      return createHttpFlightHandler(resolved).purge(fastifyRequestView(request));
    });
  }
  const registration = {};
  (fastify as Scope)[kRegistration] = registration;
  fastify.addHook('onRoute', function (this: FastifyInstance, route: RouteOptions) {
    // Registered again in a child scope: the closest registration handles the route, alone.
    if ((this as Scope)[kRegistration] !== registration) return;
    const resolved = routeOptions(options, (route.config as { flight?: FastifyFlightRouteConfig } | undefined)?.flight);
    if (!resolved) return;
    // Validated here, when the route is declared: bad options fail the boot with FlightValidationError.
    const limits = resolveHttpFlightOptions(resolved);
    route.handler = coalesce(resolved, route.handler as RouteHandler);
    route.preParsing = withHook(route.preParsing, bodyLimitHook(limits));
  });
  done();
};

/**
 * The plugin. Register it (awaited, before the routes) with a single-flight instance, then opt routes in
 * with `config.flight`:
 *
 * ```ts
 * await app.register(fastifyFlight, { singleFlight });
 * app.get('/report', { config: { flight: 'report' } }, handler);
 * ```
 * Identical concurrent requests to such a route (same stage and key) run its handler once across the
 * cluster; the others receive the same response. It respects encapsulation: it applies to the routes of the
 * scope it is registered in and of that scope's children. Throws `FlightValidationError` on invalid options
 * when a route is declared.
 */
export const fastifyFlight = fp(flightPlugin, { fastify: '4.x || 5.x', name: '@flight/fastify' });
export default fastifyFlight;
