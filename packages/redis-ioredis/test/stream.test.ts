import { fileURLToPath } from 'node:url';
import { registerStreamSuite } from '@flight/redis-scripts/testing';

const adapter = { name: 'ioredis', kind: 'ioredis', module: fileURLToPath(new URL('../src/index.ts', import.meta.url)) } as const;
registerStreamSuite(adapter, 'standalone');
registerStreamSuite(adapter, 'cluster');
