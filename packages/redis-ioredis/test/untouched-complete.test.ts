import { registerUntouchedCompleteSuite } from '@flight/redis-scripts/testing';
import { adapter } from './adapter-under-test.js';

registerUntouchedCompleteSuite(adapter);
