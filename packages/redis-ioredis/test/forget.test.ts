import { fileURLToPath } from 'node:url';
import { registerForgetSuite } from '@flight/redis-scripts/testing';

registerForgetSuite({ name: 'ioredis', kind: 'ioredis', module: fileURLToPath(new URL('../src/index.ts', import.meta.url)) });
