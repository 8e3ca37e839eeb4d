import { registerUntouchedCompleteSuite } from '@flight/redis-test-kit';
import { adapter } from './adapter-under-test.js';

registerUntouchedCompleteSuite(adapter);
