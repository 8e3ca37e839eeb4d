import fastify5 from 'fastify';
import fastify4 from 'fastify4';
import { registerMiddlewareSuite } from '@flight/http-shared/testing';
import { fastifyDriver, type FastifyFactory } from './driver.js';

// The same suite as Express and Koa, against both majors of Fastify.
registerMiddlewareSuite(fastifyDriver('fastify 5', fastify5));
registerMiddlewareSuite(fastifyDriver('fastify 4', fastify4 as unknown as FastifyFactory));
