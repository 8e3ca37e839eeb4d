/** This adapter as the shared Redis suites of @flight/redis-test-kit drive it. */
import { fileURLToPath } from 'node:url';
import type { RedisAdapterUnderTest } from '@flight/redis-test-kit';
import { createIoredisCoordinator, createIoredisDriver, createIoredisSessionLock } from '../src/index.js';

export const adapter: RedisAdapterUnderTest = {
  name: 'ioredis',
  kind: 'ioredis',
  module: fileURLToPath(new URL('../src/index.ts', import.meta.url)),
  coordinator: (url, options) => createIoredisCoordinator({ redis: url, ...options }),
  sessionLock: (url, options) => createIoredisSessionLock({ redis: url, ...options }),
  driver: (url) => createIoredisDriver({ redis: url }),
};
