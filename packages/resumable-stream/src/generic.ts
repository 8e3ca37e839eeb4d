/**
 * `createResumableStreamContext` on any coordinator of this project, as `resumable-stream/generic` offers it
 * for any client: the streams need the coordinator's Lua scripts, so instead of a `Publisher` and a
 * `Subscriber` it takes the coordinator (`createIoredisCoordinator`, `createNodeRedisCoordinator`: a Redis
 * Cluster, a Sentinel client, Valkey) and, optionally, the single-flight over it.
 */
import type { SingleFlight } from '@flight/core';
import { FlightConfigurationError } from '@flight/core';
import { createStreamContext } from './stream-context.js';
import type { ContextOptions, ResumableStreamContext, StreamCoordinator } from './types.js';

export type { ResumableStreamContext, StreamCoordinator } from './types.js';

export interface CreateResumableStreamContextOptions extends ContextOptions {
  /** A Redis coordinator of this project (its key prefix is the streams', not `keyPrefix`). */
  coordinator: StreamCoordinator;
  /** The single-flight the streams run on (it must use `coordinator`). @default one made here */
  flights?: SingleFlight;
}

export function createResumableStreamContext(options: CreateResumableStreamContextOptions): ResumableStreamContext {
  if (typeof options?.coordinator?.readMeta !== 'function')
    throw new FlightConfigurationError(
      'createResumableStreamContext: coordinator must be a Redis coordinator of @flight/redis-ioredis or @flight/redis-node',
    );
  return createStreamContext(options, { coordinator: options.coordinator, ...(options.flights ? { flights: options.flights } : {}) });
}
