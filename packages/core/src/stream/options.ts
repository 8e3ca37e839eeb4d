/** The options of `executeStream`, with their defaults resolved in one place. */
import { knownOptionsCheck, type ListsEveryOption } from '../config/known-options.js';
import { FlightValidationError } from '../errors.js';
import type { StagePolicy } from '../policy/stage-policy.js';
import type { ExecuteStreamOptions, StreamPosition, StreamRestartMode } from './types.js';

export const DEFAULT_MAX_STREAM_CHUNKS = 10_000;
export const DEFAULT_STREAM_BATCH_MS = 0;

export interface ResolvedStreamOptions {
  onRestart: StreamRestartMode;
  after: StreamPosition | undefined;
  maxChunks: number;
  maxBytes: number;
  batchMs: number;
}

const STREAM_OPTIONS = [
  'signal',
  'sessionId',
  'keepFailures',
  'cancelWhenAbandoned',
  'onRestart',
  'after',
  'maxChunks',
  'maxBytes',
  'batchMs',
  'resultTtlMs',
] as const satisfies readonly (keyof ExecuteStreamOptions)[];

// Compile-time: an option added to the type but not to the list above fails here.
const everyOptionListed: ListsEveryOption<ExecuteStreamOptions, typeof STREAM_OPTIONS> = true;
void everyOptionListed;

/** A misspelt option (`batchMS`) is a `FlightConfigurationError` naming the one meant, never silently ignored. */
const assertStreamOptions = knownOptionsCheck('executeStream', STREAM_OPTIONS);

function count(name: string, value: number | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < min)
    throw new FlightValidationError(`${name} must be an integer >= ${min}, got ${String(value)}`);
  return value;
}

/** The most bytes the stored chunk list of a stream within its caps takes: the chunks, two brackets, a comma between chunks. */
export function storedListCap(maxBytes: number, maxChunks: number): number {
  return maxBytes + maxChunks + 1;
}

export function resolveStreamOptions(options: ExecuteStreamOptions, policy: StagePolicy): ResolvedStreamOptions {
  assertStreamOptions(options);
  const onRestart = options.onRestart ?? 'error';
  if (onRestart !== 'error' && onRestart !== 'restart') {
    throw new FlightValidationError(`onRestart must be 'error' or 'restart', got ${String(onRestart)}`, {
      context: { stage: policy.stage },
    });
  }
  return {
    onRestart,
    after: resolveAfter(options.after),
    maxChunks: count('maxChunks', options.maxChunks, DEFAULT_MAX_STREAM_CHUNKS, 1),
    maxBytes: count('maxBytes', options.maxBytes, policy.maxResultBytes, 1),
    batchMs: count('batchMs', options.batchMs, DEFAULT_STREAM_BATCH_MS, 0),
  };
}

function resolveAfter(after: StreamPosition | undefined): StreamPosition | undefined {
  if (after === undefined) return undefined;
  const epoch = after?.epoch;
  if (typeof after !== 'object' || after === null || (epoch !== undefined && !Number.isSafeInteger(epoch)))
    throw new FlightValidationError(`after must be { epoch, index } as a stream gave them, got ${JSON.stringify(after)}`);
  return { epoch, index: count('after.index', after.index, 0, 0) };
}
