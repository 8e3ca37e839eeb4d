/**
 * Server-sent events, both ends: `SseWriter` writes the demo's streamed answers (`event:` + one JSON
 * `data:` line per event) and `readSse` reads any SSE body back as `{ event, data }` records (the
 * burst client of `pnpm demo` and the tests). Comments (`:` lines) and `retry:`/`id:` fields are ignored.
 */
import type { ServerResponse } from 'node:http';

export interface SseEvent {
  /** The `event:` field (`message` when absent). */
  event: string;
  /** The `data:` lines joined with newlines. */
  data: string;
}

/** Reads an SSE body as events, as they arrive. */
export async function* readSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const bytes of body) {
    buffer += decoder.decode(bytes, { stream: true }).replace(/\r\n?/g, '\n');
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') event = value;
        else if (field === 'data') data.push(value);
      }
      if (data.length) yield { event, data: data.join('\n') };
    }
  }
}

/** Writes SSE events of JSON values on an HTTP response (the headers on the first event). */
export class SseWriter {
  constructor(private readonly res: ServerResponse) {}

  get started(): boolean {
    return this.res.headersSent;
  }

  /** Sends the headers (never cached, never buffered by a proxy) and, when given, the client's reconnection delay. */
  open(retryMs?: number): void {
    if (this.res.headersSent) return;
    this.res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    if (retryMs !== undefined) this.res.write(`retry: ${retryMs}\n\n`);
  }

  send(event: string, data: unknown): void {
    this.open();
    this.res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }
}
