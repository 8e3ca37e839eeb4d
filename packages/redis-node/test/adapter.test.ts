import { registerRedisAdapterSuite } from '@flight/redis-scripts/testing';
import { adapter } from './adapter-under-test.js';

registerRedisAdapterSuite(adapter);
