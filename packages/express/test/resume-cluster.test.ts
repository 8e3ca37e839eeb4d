import { registerResumeSuite } from '@flight/http-test-kit';
import { drivers } from './drivers.js';

// Resumable streams over the other adapter and a Redis Cluster (the middleware suite runs them on ioredis and the shared server).
registerResumeSuite(drivers['express 5'], { adapter: 'node-redis', cluster: true });
