import { describe, expect, it } from 'vitest';
import { parseProgress, RecentEntries } from '../src/streams/stream-notice.js';

describe('progress notice payload', () => {
  it('parses the last id alone, or the carried entries (lengths in UTF-8 bytes, spaces inside chunks)', () => {
    expect(parseProgress('5-0')).toEqual({ lastId: '5-0' });
    expect(parseProgress('7-1 - 7-0 5 "a b" 7-1 14 "ключ ✓"')).toEqual({
      lastId: '7-1',
      before: '',
      entries: [
        { id: '7-0', chunk: '"a b"' },
        { id: '7-1', chunk: '"ключ ✓"' },
      ],
    });
    expect(parseProgress('8-0 7-1 8-0 3 "c"')).toEqual({ lastId: '8-0', before: '7-1', entries: [{ id: '8-0', chunk: '"c"' }] });
  });

  it('drops a payload whose lengths or ids do not add up (the reader reads instead)', () => {
    for (const bad of ['', '8-0 7-1', '8-0 7-1 8-0 9 "c"', '8-0 7-1 8-0 x "c"', '9-0 7-1 8-0 3 "c"', '8-0 7-1 8-0']) {
      expect(parseProgress(bad)).toBeUndefined();
    }
  });
});

describe('RecentEntries', () => {
  const e = (id: string) => ({ id, chunk: `"${id}"` });

  it('gives the entries after an id it holds, nothing for an id it does not, and starts over after a gap', () => {
    const w = new RecentEntries();
    expect(w.following('')).toEqual([]);
    w.add('', [e('1-0'), e('2-0')]);
    w.add('2-0', [e('3-0')]);
    expect(w.following('')).toEqual([e('1-0'), e('2-0'), e('3-0')]);
    expect(w.following('2-0')).toEqual([e('3-0')]);
    expect(w.following('3-0')).toEqual([]);
    // A notice missed: the window holds only what follows the gap.
    w.add('5-0', [e('6-0')]);
    expect(w.following('3-0')).toEqual([]);
    expect(w.following('5-0')).toEqual([e('6-0')]);
  });

  it('keeps the latest 512 entries, and at most 256 KiB of chunks', () => {
    const w = new RecentEntries();
    for (let i = 1; i <= 600; i++) w.add(i === 1 ? '' : `${i - 1}-0`, [e(`${i}-0`)]);
    expect(w.following('')).toEqual([]);
    expect(w.following('88-0')).toHaveLength(512);
    const big = new RecentEntries();
    const chunk = 'x'.repeat(8000);
    for (let i = 1; i <= 40; i++) big.add(i === 1 ? '' : `${i - 1}-0`, [{ id: `${i}-0`, chunk }]);
    expect(big.following('8-0')).toHaveLength(32);
    expect(big.following('7-0')).toEqual([]);
  });
});
