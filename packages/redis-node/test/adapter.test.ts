import { fileURLToPath } from 'node:url';
import { registerRedisAdapterSuite } from '@flight/redis-scripts/testing';
import { createNodeRedisCoordinator, createNodeRedisDriver, createNodeRedisSessionLock } from '../src/index.js';

registerRedisAdapterSuite({
  name: 'node-redis',
  kind: 'node-redis',
  module: fileURLToPath(new URL('../src/index.ts', import.meta.url)),
  coordinator: (url, options) => createNodeRedisCoordinator({ redis: { url }, ...options }),
  sessionLock: (url, options) => createNodeRedisSessionLock({ redis: { url }, ...options }),
  driver: (url) => createNodeRedisDriver({ redis: { url } }),
});
