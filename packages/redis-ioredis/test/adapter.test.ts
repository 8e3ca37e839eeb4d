import { fileURLToPath } from 'node:url';
import { registerRedisAdapterSuite } from '@flight/redis-scripts/testing';
import { createIoredisCoordinator, createIoredisDriver, createIoredisSessionLock } from '../src/index.js';

registerRedisAdapterSuite({
  name: 'ioredis',
  kind: 'ioredis',
  module: fileURLToPath(new URL('../src/index.ts', import.meta.url)),
  coordinator: (url, options) => createIoredisCoordinator({ redis: url, ...options }),
  sessionLock: (url, options) => createIoredisSessionLock({ redis: url, ...options }),
  driver: (url) => createIoredisDriver({ redis: url }),
});
