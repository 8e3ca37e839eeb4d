import { registerRedisAdapterSuite } from '@flight/redis-test-kit';
import { adapter } from './adapter-under-test.js';

registerRedisAdapterSuite(adapter);
