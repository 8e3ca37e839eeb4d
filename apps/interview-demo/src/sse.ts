/**
 * Server-sent events, both ends: `SseWriter` writes the demo's streamed answers (`event:` + one JSON
 * `data:` line per event) and `readSse` reads any SSE body back as `{ event, data, id }` records (the
 * burst client of `pnpm demo` and the tests). Comments (`:` lines) and `retry:` fields are not events.
 */
import type { ServerResponse } from 'node:http';
import { createParser } from 'eventsource-parser';

export interface SseEvent {
  /** The `event:` field (`message` when absent). */
  event: string;
  /** The `data:` lines joined with newlines. */
  data: string;
  /** The `id:` field, when the event has one (the position a client resumes after). */
  id?: string | undefined;
}

/** Reads an SSE body as events, as they arrive (parsed by `eventsource-parser`, as the OpenAI SDK does). */
export async function* readSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  const parsed: SseEvent[] = [];
  const parser = createParser({ onEvent: (event) => parsed.push({ event: event.event ?? 'message', data: event.data, id: event.id }) });
  for await (const bytes of body) {
    parser.feed(decoder.decode(bytes, { stream: true }));
    yield* parsed.splice(0);
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

  /** Sends one event; with `id`, the position a client that reconnects resumes after (`Last-Event-ID`). */
  send(event: string, data: unknown, id?: string): void {
    this.open();
    this.res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n${id === undefined ? '' : `id: ${id}\n`}\n`);
  }
}
