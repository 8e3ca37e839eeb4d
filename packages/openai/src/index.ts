/**
 * `@flight/openai`: identical model calls made once across a cluster, as a drop-in for the official
 * `openai` client. See the README for the request identity, the sampling policy and what each caller sees.
 */
export { withFlights } from './with-flights.js';
export { flightKeyOf } from './coalesced-create.js';
export type { OpenAIFlightOptions } from './options.js';
export type { SharePolicy } from './sampling.js';
export type { CoalescedApi } from './apis.js';
export { flightOf, positionOf, type FlightCallInfo } from './flight-info.js';
export { flightRequest, type FlightCallOptions } from './call-options.js';
export { FlightOpenAINoResponseError, FlightOpenAIStreamCutError } from './errors.js';
export { OPENAI_METRICS } from './genai-telemetry.js';
