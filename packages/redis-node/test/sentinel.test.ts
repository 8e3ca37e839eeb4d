import { registerSentinelSuite } from '@flight/redis-test-kit';
import { adapter } from './adapter-under-test.js';

registerSentinelSuite(adapter);
