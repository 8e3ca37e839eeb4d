/** The Express drivers of the shared suite, by name (the suite's server processes load them from here). */
import express5 from 'express';
import express4 from 'express4';
import { expressDriver } from './driver.js';

export const drivers = {
  'express 5': expressDriver('express 5', express5),
  'express 4': expressDriver('express 4', express4 as unknown as typeof express5),
};
