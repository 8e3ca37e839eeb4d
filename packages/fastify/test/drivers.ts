/** The Fastify drivers of the shared suite, by name (the suite's server processes load them from here). */
import fastify5 from 'fastify';
import fastify4 from 'fastify4';
import { fastifyDriver, type FastifyFactory } from './driver.js';

export const drivers = {
  'fastify 5': fastifyDriver('fastify 5', fastify5),
  'fastify 4': fastifyDriver('fastify 4', fastify4 as unknown as FastifyFactory),
};
