/**
 * How a stream chunk is stored: each chunk has a JSON form (strings and JSON values as they are, bytes
 * as `{ $bytes: base64 }`, a JSON object that could be mistaken for a wrapper as `{ $json: value }`).
 * The stored result of a streamed flight is the array of these forms; a stream entry is one form as JSON
 * text.
 */
import { FlightValidationError } from '../errors.js';
import type { StreamChunk, StreamJson } from './types.js';

type Stored = StreamJson;

const isWrapperLike = (value: object): boolean => {
  const keys = Object.keys(value);
  return keys.length === 1 && (keys[0] === '$bytes' || keys[0] === '$json');
};

/** The JSON form of a chunk; throws `FlightValidationError` for anything that is not a chunk. */
export function toStoredChunk(chunk: StreamChunk): Stored {
  if (typeof chunk === 'string') return chunk;
  if (chunk instanceof Uint8Array) return { $bytes: Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('base64') };
  if (chunk === null || typeof chunk === 'number' || typeof chunk === 'boolean') {
    if (typeof chunk === 'number' && !Number.isFinite(chunk)) throw new FlightValidationError(`a stream chunk must be JSON; got ${chunk}`);
    return chunk;
  }
  if (typeof chunk === 'object') return !Array.isArray(chunk) && isWrapperLike(chunk) ? { $json: chunk } : chunk;
  throw new FlightValidationError(`a stream chunk must be a string, a Uint8Array or a JSON value; got ${typeof chunk}`);
}

/** The chunk of a JSON form (a `Uint8Array` for bytes). */
export function fromStoredChunk(stored: Stored): StreamChunk {
  if (stored !== null && typeof stored === 'object' && !Array.isArray(stored) && isWrapperLike(stored)) {
    if ('$bytes' in stored) return new Uint8Array(Buffer.from(String(stored.$bytes), 'base64'));
    return stored.$json as StreamJson;
  }
  return stored;
}

/** A chunk as the text of one stream entry. */
export function encodeChunk(chunk: StreamChunk): string {
  return JSON.stringify(toStoredChunk(chunk));
}

/** The chunk of a stream entry's text. */
export function decodeChunk(text: string): StreamChunk {
  return fromStoredChunk(JSON.parse(text) as Stored);
}

/** The chunks of a streamed flight's stored value; `FlightValidationError` when the value is not a chunk list. */
export function fromStoredChunks(value: unknown, context: { stage: string; key: string }): StreamChunk[] {
  if (!Array.isArray(value)) {
    throw new FlightValidationError(
      'the stored result of this flight is not a chunk list (was it run by execute instead of executeStream?)',
      { context },
    );
  }
  return value.map((stored) => fromStoredChunk(stored as Stored));
}
