/** `readSse` (the demo's SSE reader) over bodies cut at awkward places, as a network may cut them. */
import { describe, expect, it } from 'vitest';
import { readSse, type SseEvent } from '../src/sse.js';

async function read(chunks: string[]): Promise<SseEvent[]> {
  const encoder = new TextEncoder();
  async function* body() {
    for (const chunk of chunks) yield encoder.encode(chunk);
  }
  const events: SseEvent[] = [];
  for await (const event of readSse(body())) events.push(event);
  return events;
}

describe('readSse', () => {
  it('a CRLF line end cut between its \\r and its \\n is one line end, not two', async () => {
    expect(await read(['event: token\r', '\ndata: {"t":"a"}\r', '\n\r', '\n'])).toEqual([{ event: 'token', data: '{"t":"a"}' }]);
  });

  it('joins data lines, skips comments and events without data, reads a multi-byte character cut in two', async () => {
    const euro = Buffer.from('€', 'utf8');
    const encoder = new TextEncoder();
    async function* body() {
      yield encoder.encode(': keep-alive\n\nevent: empty\n\ndata: line 1\ndata: line 2\n\ndata: ');
      yield euro.subarray(0, 1);
      yield Buffer.concat([euro.subarray(1), Buffer.from('\n\n')]);
    }
    const events: SseEvent[] = [];
    for await (const event of readSse(body())) events.push(event);
    expect(events).toEqual([
      { event: 'message', data: 'line 1\nline 2' },
      { event: 'message', data: '€' },
    ]);
  });
});
