import { registerMiddlewareSuite } from '@flight/http-test-kit';
import { drivers } from './drivers.js';

// The same suite against both majors of Express.
for (const driver of Object.values(drivers)) registerMiddlewareSuite(driver);
