/**
 * Server-Sent Events as whole events: a handler's writes cut into complete events (each ends at a blank
 * line: two line ends, each `\r\n`, `\n` or `\r`), byte for byte as written, so that each event becomes
 * one chunk of the flight and can carry an id. A write may hold several events or part of one; the part
 * after the last blank line waits for the next write. UTF-8 split across writes is joined before cutting.
 */
import { StringDecoder } from 'node:string_decoder';

/** A blank line: a line end followed by another (`\r\n` counts as one line end). */
const EVENT_END = /(?:\r\n|\r(?!\n)|\n)(?:\r\n|\r(?!\n)|\n)/g;

/** Whether a `Content-Type` is Server-Sent Events. */
export const isEventStream = (type: unknown): boolean => /^\s*text\/event-stream\b/i.test(String(type ?? ''));

export class SseEventSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';

  /** The complete events that `piece` finishes, in order. */
  push(piece: string | Buffer): string[] {
    this.pending += typeof piece === 'string' ? piece : this.decoder.write(piece);
    const events: string[] = [];
    let start = 0;
    EVENT_END.lastIndex = 0;
    for (let match = EVENT_END.exec(this.pending); match; match = EVENT_END.exec(this.pending)) {
      const end = match.index + match[0].length;
      // A lone `\r` at the very end may be the first half of `\r\n`: wait for the next write to know.
      if (end === this.pending.length && this.pending.endsWith('\r')) break;
      events.push(this.pending.slice(start, end));
      start = end;
    }
    this.pending = this.pending.slice(start);
    return events;
  }

  /** What is left once the handler ended its response: an event without its blank line, as one last event. */
  end(): string[] {
    const rest = this.pending + this.decoder.end();
    this.pending = '';
    return rest.length > 0 ? [rest] : [];
  }
}

/**
 * `event` with `id` as its last field: a later `id:` wins over one the handler wrote, so a browser's
 * `Last-Event-ID` names this event. An event cut off by the end of the response gets its blank line.
 */
export function withEventId(event: string, id: string): string {
  const match = /(?:\r\n|\r|\n)(?:\r\n|\r|\n)?$/.exec(event);
  const body = match ? event.slice(0, match.index) : event;
  return body.length === 0 ? `id: ${id}\n\n` : `${body}\nid: ${id}\n\n`;
}

/** The event that tells a resumed client the run it followed was replaced: what follows starts over. */
export function restartEvent(id: string, reason: 'takeover' | 'expired'): string {
  return `event: flight-restart\ndata: {"reason":"${reason}"}\nid: ${id}\n\n`;
}
