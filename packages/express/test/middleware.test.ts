import express5 from 'express';
import express4 from 'express4';
import { registerMiddlewareSuite } from '@flight/http-shared/testing';
import { expressDriver } from './driver.js';

// The same suite against both majors of Express.
registerMiddlewareSuite(expressDriver('express 5', express5));
registerMiddlewareSuite(expressDriver('express 4', express4 as unknown as typeof express5));
