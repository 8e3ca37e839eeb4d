/**
 * The option names `execute` takes (`ExecuteOptions`, and what `executeStream` passes it), checked on every
 * call: a misspelt option (`atMostOnse`) is a `FlightConfigurationError` naming the one meant, never an
 * option silently not applied.
 */
import { knownOptionsCheck, type ListsEveryOption } from '../config/known-options.js';
import type { StreamExecuteOptions } from './types.js';

const EXECUTE_OPTIONS = [
  'signal',
  'sessionId',
  'localFallback',
  'atMostOnce',
  'keepFailures',
  'resultTtlMs',
  'cancelWhenAbandoned',
  'fresh',
  'staleFor',
  'staleRefresh',
  'holdFailure',
  'storeInBackground',
  'progressedAt',
  'maxResultBytes',
] as const satisfies readonly (keyof StreamExecuteOptions)[];

// Compile-time: an option added to the type but not to the list above fails here.
const everyOptionListed: ListsEveryOption<StreamExecuteOptions, typeof EXECUTE_OPTIONS> = true;
void everyOptionListed;

/** Throws `FlightConfigurationError` for options that are not an object or name an option `execute` does not take. */
export const assertExecuteOptions = knownOptionsCheck('execute', EXECUTE_OPTIONS);
