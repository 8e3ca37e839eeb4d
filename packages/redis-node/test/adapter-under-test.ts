/** This adapter as the shared Redis suites of @flight/redis-test-kit drive it. */
import { fileURLToPath } from 'node:url';
import type { RedisAdapterUnderTest } from '@flight/redis-test-kit';
import { createNodeRedisCoordinator, createNodeRedisDriver, createNodeRedisSessionLock } from '../src/index.js';

export const adapter: RedisAdapterUnderTest = {
  name: 'node-redis',
  kind: 'node-redis',
  module: fileURLToPath(new URL('../src/index.ts', import.meta.url)),
  coordinator: (url, options) => createNodeRedisCoordinator({ redis: { url }, ...options }),
  sessionLock: (url, options) => createNodeRedisSessionLock({ redis: { url }, ...options }),
  driver: (url) => createNodeRedisDriver({ redis: { url } }),
};
