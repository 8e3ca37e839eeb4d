export * from './errors.js';
export * from './options.js';
export * from './request.js';
export * from './response.js';
export { recordResponse, type OwnerRun, type RecordResult } from './recorder.js';
export {
  createHttpFlightHandler,
  type HttpExchange,
  type HttpFlightHandler,
  type HttpFlightRole,
  type HttpRequestView,
} from './handler.js';
export { eachSharedHeader, groupedHeaders, errorStatus } from './replay.js';
export { NodeExchange, nodeRequestView, type NodeRequest } from './node-exchange.js';
export { teeResponse, type StreamedHead, type StreamedOwnerRun } from './stream-tee.js';
