import { fileURLToPath } from 'node:url';
import { registerForgetSuite } from '@flight/redis-test-kit';

registerForgetSuite({ name: 'node-redis', kind: 'node-redis', module: fileURLToPath(new URL('../src/index.ts', import.meta.url)) });
