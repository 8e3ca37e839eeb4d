import { registerMiddlewareSuite } from '@flight/http-test-kit';
import { drivers } from './drivers.js';

// The same suite as Express and Koa, against both majors of Fastify.
for (const driver of Object.values(drivers)) registerMiddlewareSuite(driver);
