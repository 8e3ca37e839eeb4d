import { registerStrictAckSuite } from '@flight/redis-test-kit';
import { adapter } from './adapter-under-test.js';

registerStrictAckSuite(adapter);
