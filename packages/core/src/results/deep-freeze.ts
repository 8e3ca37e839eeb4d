/**
 * What callers receive: one value per run, deep-frozen, shared by every caller of the run and by the L1
 * cache. Freezing makes a mutation by one caller throw (strict mode) or do nothing, instead of showing up
 * in another caller's result; it costs one walk per new value and nothing for a value frozen before (a
 * deep-frozen tree stays deep-frozen: its parts can no longer be replaced).
 *
 * Plain objects and arrays are frozen to the leaves. Typed arrays, `Buffer`s and `ArrayBuffer`s cannot be
 * frozen, and `Map`, `Set` and `Date` keep their internal state mutable: treat them as read-only, or turn on
 * `encodeLocalResults` to give callers JSON-shaped values.
 */

/** Frozen roots and their estimated size in bytes. */
const frozen = new WeakMap<object, number>();

/** Rough in-memory bytes of a primitive. */
function primitiveBytes(value: unknown): number {
  return typeof value === 'string' ? 16 + 2 * value.length : 8;
}

/** Deep-freezes `value` (see above) and returns its estimated size in bytes (for the byte-bounded L1). */
export function deepFreeze(value: unknown): number {
  if (typeof value !== 'object' || value === null) return primitiveBytes(value);
  const known = frozen.get(value);
  if (known !== undefined) return known;
  let bytes = 0;
  const seen = new Set<object>();
  const stack: object[] = [value];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (seen.has(node)) continue;
    seen.add(node);
    const sub = node === value ? undefined : frozen.get(node);
    if (sub !== undefined) {
      bytes += sub;
      continue;
    }
    if (ArrayBuffer.isView(node) || node instanceof ArrayBuffer) {
      bytes += node.byteLength;
      continue;
    }
    bytes += 16;
    if (node instanceof Map) {
      for (const [k, v] of node) {
        for (const part of [k, v]) {
          if (typeof part === 'object' && part !== null) stack.push(part);
          else bytes += primitiveBytes(part);
        }
      }
    } else if (node instanceof Set) {
      for (const v of node) {
        if (typeof v === 'object' && v !== null) stack.push(v);
        else bytes += primitiveBytes(v);
      }
    }
    if (typeof node !== 'function') Object.freeze(node);
    for (const key of Object.keys(node)) {
      bytes += 8 + key.length;
      const child = (node as Record<string, unknown>)[key];
      if (typeof child === 'object' && child !== null) stack.push(child);
      else bytes += primitiveBytes(child);
    }
  }
  frozen.set(value, bytes);
  return bytes;
}
