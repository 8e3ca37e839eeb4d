import { fileURLToPath } from 'node:url';
import { registerStreamSuite } from '@flight/redis-test-kit';

const adapter = { name: 'ioredis', kind: 'ioredis', module: fileURLToPath(new URL('../src/index.ts', import.meta.url)) } as const;
registerStreamSuite(adapter, 'standalone');
registerStreamSuite(adapter, 'cluster');
