/** A streamed response's body pieces as flight chunks, and back. */
import { isUtf8 } from 'node:buffer';
import type { StreamChunk } from '@flight/core';
import type { Piece } from './recorder.js';

/** A body piece as a chunk: text as it was written (or bytes that are valid UTF-8, as text), else the bytes. */
export function chunkOf(piece: Piece): StreamChunk {
  return typeof piece === 'string' || !isUtf8(piece) ? piece : piece.toString('utf8');
}

/** The bytes or text a chunk read back from the flight stands for. */
export function pieceOf(chunk: StreamChunk): Piece {
  if (typeof chunk === 'string') return chunk;
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  throw new TypeError('a streamed response chunk is neither text nor bytes');
}

/** The text of a chunk (an event of a resumable stream). */
export function textOf(chunk: StreamChunk): string {
  const piece = pieceOf(chunk);
  return typeof piece === 'string' ? piece : piece.toString('utf8');
}
