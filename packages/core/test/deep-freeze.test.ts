/** The fast freeze of values fresh from `JSON.parse` gives the same result as the general `deepFreeze`. */
import { describe, expect, it } from 'vitest';
import { deepFreeze, deepFreezeParsedJson } from '../src/results/deep-freeze.js';

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
