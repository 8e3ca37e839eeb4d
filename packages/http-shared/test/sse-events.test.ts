/**
 * Cutting Server-Sent Events into whole events whatever the writes (property tests), ids that name the
 * flight and position, and events that carry them.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { flightTag, formatEventId, parseEventId } from '../src/resume/event-id.js';
import { SseEventSplitter, withEventId } from '../src/resume/sse-events.js';

const field = fc.stringMatching(/^(data|event|id|retry|): ?[^\r\n]{0,12}$/);
const lineEnd = fc.constantFrom('\n', '\r\n', '\r');
// An event: field lines, then a blank line. A last line ended by `\r` and a blank line `\n` would be one
// `\r\n` line end, not an event end: not an event.
const event = fc
  .tuple(fc.array(fc.tuple(field, lineEnd), { minLength: 1, maxLength: 4 }), lineEnd)
  .filter(([lines, blank]) => !(lines[lines.length - 1]![1] === '\r' && blank.startsWith('\n')))
  .map(([lines, blank]) => lines.map(([text, end]) => text + end).join('') + blank);

/** `text` cut at `cuts` (positions), as writes. */
function writes(text: string, cuts: number[]): string[] {
  const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let start = 0;
  for (const cut of at) {
    pieces.push(text.slice(start, cut));
    start = cut;
  }
  pieces.push(text.slice(start));
  return pieces;
}

describe('SseEventSplitter', () => {
  it('gives back exactly the events written, byte for byte, however the writes cut them', () => {
    fc.assert(
      fc.property(fc.array(event, { minLength: 1, maxLength: 6 }), fc.array(fc.nat(), { maxLength: 8 }), (events, cuts) => {
        const splitter = new SseEventSplitter();
        const out = writes(events.join(''), cuts).flatMap((piece) => splitter.push(piece));
        out.push(...splitter.end());
        expect(out).toEqual(events);
      }),
    );
  });

  it('joins UTF-8 split across writes, and gives an unfinished last event at the end', () => {
    const splitter = new SseEventSplitter();
    const bytes = Buffer.from('data: héllo ✓\n\ndata: tail');
    const out = [...splitter.push(bytes.subarray(0, 9)), ...splitter.push(bytes.subarray(9, 17)), ...splitter.push(bytes.subarray(17))];
    expect(out).toEqual(['data: héllo ✓\n\n']);
    expect(splitter.end()).toEqual(['data: tail']);
  });
});

describe('event ids', () => {
  it('round-trip, name the flight, and refuse what is not one', () => {
    const tag = flightTag('answers', 'GET /a');
    expect(tag).toHaveLength(16);
    expect(flightTag('answers', 'GET /b')).not.toBe(tag);
    const id = formatEventId({ tag, epoch: 1796382395912000, index: 7 });
    expect(parseEventId(id)).toEqual({ tag, epoch: 1796382395912000, index: 7 });
    for (const bad of ['', 'x', `${tag}.1`, `${tag}.1.2.3`, `${tag}.99999999999999999.1`, `${tag.slice(1)}.1.1`])
      expect(parseEventId(bad)).toBeUndefined();
  });

  it('is the last field of its event, so it wins over an id the handler wrote', () => {
    expect(withEventId('data: a\n\n', 'X')).toBe('data: a\nid: X\n\n');
    expect(withEventId('id: mine\r\ndata: a\r\n\r\n', 'X')).toBe('id: mine\r\ndata: a\nid: X\n\n');
    expect(withEventId('data: cut off', 'X')).toBe('data: cut off\nid: X\n\n');
    expect(withEventId(': keep-alive\n\n', 'X')).toBe(': keep-alive\nid: X\n\n');
  });
});
