/**
 * The body of a resumable stream for a caller that is not the owner: each event (one chunk of the flight)
 * with its id, from the first event or, for a resumed request, after the one it names. A run that is not
 * the one the resumed id came from, or that is replaced while the caller reads (a takeover), is announced
 * with a `flight-restart` event and given from its first event: two runs' events are never spliced.
 */
import { FlightStreamRestart, type StreamChunk } from '@flight/core';
import { textOf } from '../chunk-pieces.js';
import { formatEventId, type EventPosition } from './event-id.js';
import { restartEvent, withEventId } from './sse-events.js';

/** What the caller reads: the chunks after the head, and the epoch of the run they come from. */
export interface EventSource {
  chunks: AsyncIterator<StreamChunk | FlightStreamRestart>;
  epoch(): number;
}

export async function* eventPieces(source: EventSource, tag: string, after: EventPosition | undefined): AsyncGenerator<string> {
  const { chunks } = source;
  const id = (epoch: number, index: number) => formatEventId({ tag, epoch, index });
  let skipThrough = -1;
  if (after) {
    const epoch = source.epoch();
    if (after.epoch === epoch) skipThrough = after.index;
    else yield restartEvent(id(epoch, 0), 'takeover');
  }
  let index = 1; // the head is chunk 0
  try {
    for (;;) {
      const next = await chunks.next();
      if (next.done) return;
      const chunk = next.value;
      if (chunk instanceof FlightStreamRestart) {
        yield restartEvent(id(chunk.epoch ?? 0, 0), 'takeover');
        skipThrough = -1;
        index = 0; // the new run's head comes next: the response's head was sent already
        continue;
      }
      const at = index++;
      if (at === 0 || at <= skipThrough) continue;
      yield withEventId(textOf(chunk), id(source.epoch(), at));
    }
  } finally {
    await chunks.return?.();
  }
}
