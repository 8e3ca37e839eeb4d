export { flightMiddleware } from './flight-middleware.js';
export type { FlightMiddlewareOptions } from './options.js';
export type { SharePolicy } from './sampling.js';
export { flightOf, type FlightCallInfo } from './flight-info.js';
export { FlightAiSdkStreamCutError } from './errors.js';
export { AI_SDK_METRICS } from './usage-metrics.js';
