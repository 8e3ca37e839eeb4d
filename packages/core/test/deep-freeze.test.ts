/**
 * The fast freeze of values fresh from `JSON.parse` gives the same result as the general `deepFreeze`; which
 * values are recorded as deep-frozen (a lookup when returned again) and which are walked again.
 */
import { describe, expect, it } from 'vitest';
import { deepFreeze, deepFreezeParsedJson, recordedFrozenBytes } from '../src/results/deep-freeze.js';

const isDeepFrozen = (value: unknown): boolean =>
  typeof value !== 'object' || value === null || (Object.isFrozen(value) && Object.values(value).every(isDeepFrozen));

describe('deepFreezeParsedJson', () => {
  const texts = [
    '{"id":"eval-1","score":8.5,"sections":[{"title":"s0","text":"ka to ri"},{"title":"s1","text":"ü✓"}],"meta":{"tags":["a",null,true,1]}}',
    '[[[]],{},[{"a":[{"b":{}}]}]]',
    '{"__proto__":{"polluted":true},"constructor":{"prototype":{}}}',
    '"text"',
    '12.5',
    'null',
  ];

  it('freezes every node and counts the same bytes as deepFreeze', () => {
    for (const text of texts) {
      const fast = JSON.parse(text);
      const general = JSON.parse(text);
      expect(deepFreezeParsedJson(fast)).toBe(deepFreeze(general));
      expect(isDeepFrozen(fast)).toBe(true);
      expect(JSON.stringify(fast)).toBe(JSON.stringify(general));
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('leaves a value deepFreeze counts alike (walking its frozen nodes again) and survives deep nesting', () => {
    const value = JSON.parse('{"a":{"b":[1,2,3]}}');
    const bytes = deepFreezeParsedJson(value);
    expect(deepFreeze(value)).toBe(bytes);
    expect(isDeepFrozen(value)).toBe(true);
    const deep = JSON.parse('['.repeat(20_000) + ']'.repeat(20_000));
    expect(deepFreezeParsedJson(deep)).toBeGreaterThan(0);
    expect(Object.isFrozen(deep)).toBe(true);
  });
});

describe('deepFreeze records', () => {
  /** A plain tree: a root whose `items` hold `n` objects of one key (its walk visits 3 + 3n nodes and properties). */
  const tree = (n: number) => ({ items: Array.from({ length: n }, (_, i) => ({ id: i })) });

  it('a value whose walk visits 32 nodes and properties or more, flat ones included, so that returning it again is a lookup', () => {
    for (const big of [
      tree(10),
      Array.from({ length: 31 }, (_, i) => i),
      Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, i])),
    ]) {
      const bytes = deepFreeze(big);
      expect(recordedFrozenBytes(big)).toBe(bytes);
      expect(isDeepFrozen(big)).toBe(true);
      expect(deepFreeze(big)).toBe(bytes);
    }
  });

  it('no smaller value (a fresh result is walked once; the entry would cost more than a second walk)', () => {
    const small = tree(9);
    const flat = { id: 1, title: 't', body: 'b' };
    const bytes = deepFreeze(small);
    expect(recordedFrozenBytes(small)).toBeUndefined();
    expect(deepFreeze(small)).toBe(bytes);
    deepFreeze(flat);
    expect(recordedFrozenBytes(flat)).toBeUndefined();
    expect(isDeepFrozen(small) && isDeepFrozen(flat)).toBe(true);
  });

  it('no value fresh from JSON.parse (every owner and follower decodes one, never returned again as it is)', () => {
    const decoded = JSON.parse(JSON.stringify(tree(40)));
    const bytes = deepFreezeParsedJson(decoded);
    expect(recordedFrozenBytes(decoded)).toBeUndefined();
    // A supplier that returns it (another flight's value) has it walked once more, then recorded.
    expect(deepFreeze(decoded)).toBe(bytes);
    expect(recordedFrozenBytes(decoded)).toBe(bytes);
  });

  it('walks a cycle and a shared part once', () => {
    const shared = { s: [1, 2] };
    const cyclic: Record<string, unknown> = { a: shared, b: shared };
    cyclic.self = cyclic;
    expect(deepFreeze(cyclic)).toBeGreaterThan(0);
    expect(Object.isFrozen(cyclic) && Object.isFrozen(shared) && Object.isFrozen(shared.s)).toBe(true);
  });
});
