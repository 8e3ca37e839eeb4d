/**
 * `createResumableStreamContext` on node-redis (`redis`), as `resumable-stream` and `resumable-stream/redis`
 * offer it: the `publisher` you pass (a node-redis client, connected or not), or a client of `REDIS_URL` (or
 * `KV_URL`).
 */
import { FlightConfigurationError } from '@flight/core';
import { createNodeRedisCoordinator, type NodeRedisClient } from '@flight/redis-node';
import { createStreamContext } from './stream-context.js';
import type { ContextOptions, ResumableStreamContext } from './types.js';

export type { ResumableStreamContext } from './types.js';

export interface CreateResumableStreamContextOptions extends ContextOptions {
  /** The node-redis client the streams use (connected here when it is not yet). @default a client of REDIS_URL or KV_URL */
  publisher?: NodeRedisClient;
}

/** The Redis URL `resumable-stream` reads: `REDIS_URL`, else `KV_URL`. */
export function redisUrlFromEnv(): string {
  const url = process.env.REDIS_URL || process.env.KV_URL;
  if (!url) throw new FlightConfigurationError('createResumableStreamContext: set REDIS_URL (or KV_URL), or pass a publisher');
  return url;
}

export function createResumableStreamContext(options: CreateResumableStreamContextOptions): ResumableStreamContext {
  const prefix = options.keyPrefix ?? 'resumable-stream';
  const client = options.publisher;
  // resumable-stream connects the clients it is given: so does this context (node-redis queues commands meanwhile).
  if (client && !(client as { isOpen?: boolean }).isOpen) void (client as { connect(): Promise<unknown> }).connect();
  const coordinator = client
    ? createNodeRedisCoordinator({ client, prefix })
    : createNodeRedisCoordinator({ redis: { url: redisUrlFromEnv() }, prefix });
  return createStreamContext(options, { coordinator, ownsCoordinator: true });
}
