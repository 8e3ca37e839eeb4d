import { fileURLToPath } from 'node:url';
import { registerForgetSuite } from '@flight/redis-test-kit';

registerForgetSuite({ name: 'ioredis', kind: 'ioredis', module: fileURLToPath(new URL('../src/index.ts', import.meta.url)) });
