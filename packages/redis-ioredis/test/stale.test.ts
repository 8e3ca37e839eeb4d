import { registerStaleSuite } from '@flight/redis-test-kit';
import { adapter } from './adapter-under-test.js';

registerStaleSuite(adapter, 'standalone');
registerStaleSuite(adapter, 'cluster');
