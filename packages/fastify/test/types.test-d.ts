/**
 * Type tests of what `@flight/fastify` adds to Fastify (run by vitest's typecheck mode): `config.flight`
 * on routes, and the `singleFlight` and `purgeFlight` decorators.
 */
import type { SingleFlight } from '@flight/core';
import fastify, { type FastifyContextConfig, type FastifyRequest } from 'fastify';
import { describe, expectTypeOf, it } from 'vitest';
import { fastifyFlight, type FastifyFlightRouteConfig } from '../src/index.js';

const app = fastify();

describe('the Fastify augmentation', () => {
  it('types the decorators', () => {
    expectTypeOf(app.singleFlight).toEqualTypeOf<SingleFlight>();
    expectTypeOf(app.purgeFlight).parameters.toEqualTypeOf<[FastifyRequest, FastifyFlightRouteConfig?]>();
    expectTypeOf(app.purgeFlight).returns.toEqualTypeOf<Promise<boolean>>();
  });

  it('takes config.flight on routes: true, a stage name, or route options', () => {
    expectTypeOf<FastifyContextConfig['flight']>().toEqualTypeOf<FastifyFlightRouteConfig | undefined>();
    void app.register(fastifyFlight, { singleFlight: app.singleFlight, stage: 'api' });
    app.get('/a', { config: { flight: true } }, async () => 'a');
    app.get('/b', { config: { flight: 'reports' } }, async () => 'b');
    app.get('/c', { config: { flight: { stage: 'reports', stream: true } } }, async () => 'c');
  });
});
