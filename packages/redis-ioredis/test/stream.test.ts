import { registerStreamSuite } from '@flight/redis-test-kit';
import { adapter } from './adapter-under-test.js';

registerStreamSuite(adapter, 'standalone');
registerStreamSuite(adapter, 'cluster');
