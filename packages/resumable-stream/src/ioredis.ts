/**
 * `createResumableStreamContext` on ioredis, as `resumable-stream/ioredis` offers it: the `publisher` you pass
 * (an ioredis client), or a client of `REDIS_URL` (or `KV_URL`).
 */
import { FlightConfigurationError } from '@flight/core';
import { createIoredisCoordinator, type IoredisClient } from '@flight/redis-ioredis';
import { createStreamContext } from './stream-context.js';
import type { ContextOptions, ResumableStreamContext } from './types.js';

export type { ResumableStreamContext } from './types.js';

export interface CreateResumableStreamContextOptions extends ContextOptions {
  /** The ioredis client the streams use (`Redis` or `Cluster`). @default a client of REDIS_URL or KV_URL */
  publisher?: IoredisClient;
}

export function createResumableStreamContext(options: CreateResumableStreamContextOptions): ResumableStreamContext {
  const prefix = options.keyPrefix ?? 'resumable-stream';
  const url = process.env.REDIS_URL || process.env.KV_URL;
  if (!options.publisher && !url)
    throw new FlightConfigurationError('createResumableStreamContext: set REDIS_URL (or KV_URL), or pass a publisher');
  const coordinator = options.publisher
    ? createIoredisCoordinator({ client: options.publisher, prefix })
    : createIoredisCoordinator({ redis: url!, prefix });
  return createStreamContext(options, { coordinator, ownsCoordinator: true });
}
