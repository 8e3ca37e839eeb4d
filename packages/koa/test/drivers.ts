/** The Koa drivers of the shared suite, by name (the suite's server processes load them from here). */
import Koa3 from 'koa';
import Koa2 from 'koa2';
import { koaDriver } from './driver.js';

export const drivers = {
  'koa 3': koaDriver('koa 3', Koa3),
  'koa 2': koaDriver('koa 2', Koa2 as unknown as typeof Koa3),
};
