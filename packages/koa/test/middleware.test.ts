import Koa3 from 'koa';
import Koa2 from 'koa2';
import { registerMiddlewareSuite } from '@flight/http-shared/testing';
import { koaDriver } from './driver.js';

// The same suite against both majors of Koa.
registerMiddlewareSuite(koaDriver('koa 3', Koa3));
registerMiddlewareSuite(koaDriver('koa 2', Koa2 as unknown as typeof Koa3));
