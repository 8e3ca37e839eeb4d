import { registerOracleSuite } from '@flight/redis-test-kit';
import { adapter } from './adapter-under-test.js';

registerOracleSuite(adapter);
