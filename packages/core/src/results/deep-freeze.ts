/**
 * What callers receive: one value per run, deep-frozen, shared by every caller of the run and by the L1
 * cache. Freezing makes a mutation by one caller throw (strict mode) or do nothing, instead of showing up
 * in another caller's result; it costs one walk per new value, and a lookup for a value of 32 nodes and
 * properties or more frozen before (a deep-frozen tree stays deep-frozen: its parts can no longer be replaced).
 *
 * Plain objects and arrays (everything JSON decodes to) are frozen to the leaves. Instances of classes —
 * `Date`, `Map`, typed arrays, `Buffer`s, streams, a client library's objects — are left as they are:
 * freezing could break their own bookkeeping, and many keep mutable internal state anyway. Treat them as
 * read-only, or turn on `encodeLocalResults` to give callers JSON-shaped values.
 */

/** Frozen roots and their estimated size in bytes (see `RECORD_FROM_WALKED`). */
const frozen = new WeakMap<object, number>();

/**
 * A value whose walk visited at least this many nodes and properties together is recorded, so that
 * returning it again costs a lookup instead of another walk. Smaller ones are not: an entry costs about
 * 0.6 µs per value, the scavenges' work on it included (bench/profiles/freeze-record-cost.mjs), about what
 * walking 8 properties of frozen nodes again costs (0.07 µs each, 0.13–0.15 µs per small node), and most
 * results are fresh values that are never returned again. From 32 up the walk costs at least about 2 µs, so
 * the entry adds at most about a quarter to a fresh value and bounds the cost of a value returned again and
 * again, a flat one (a long array, an object of many keys) included.
 */
const RECORD_FROM_WALKED = 32;

/** The size recorded for `value` as deep-frozen by `deepFreeze`, if any (for tests). */
export function recordedFrozenBytes(value: object): number | undefined {
  return frozen.get(value);
}

/** Rough in-memory bytes of a value that is not walked. */
function leafBytes(value: unknown): number {
  if (typeof value === 'string') return 16 + 2 * value.length;
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return 16 + value.byteLength;
  return 16;
}

function isPlain(value: object): boolean {
  if (Array.isArray(value)) return true;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Deep-freezes `value` (see above) and returns its estimated size in bytes (for the byte-bounded L1). */
export function deepFreeze(value: unknown): number {
  if (typeof value !== 'object' || value === null) return leafBytes(value);
  const known = frozen.get(value);
  if (known !== undefined) return known;
  if (!isPlain(value)) return leafBytes(value);
  let bytes = 0;
  let walked = 0;
  // The nodes visited, made at the first child object: most results are one flat object.
  let seen: Set<object> | undefined;
  const stack: object[] = [value];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (seen) {
      if (seen.has(node)) continue;
      seen.add(node);
    }
    const sub = node === value ? undefined : frozen.get(node);
    if (sub !== undefined) {
      bytes += sub;
      continue;
    }
    bytes += 16;
    Object.freeze(node);
    const keys = Object.keys(node);
    walked += 1 + keys.length;
    for (const key of keys) {
      bytes += 8 + key.length;
      const child = (node as Record<string, unknown>)[key];
      if (typeof child === 'object' && child !== null && isPlain(child)) {
        seen ??= new Set<object>([value]);
        stack.push(child);
      } else bytes += leafBytes(child);
    }
  }
  if (walked >= RECORD_FROM_WALKED) frozen.set(value, bytes);
  return bytes;
}

/**
 * `deepFreeze` for a value fresh from `JSON.parse`: only plain objects and arrays, no part shared or seen
 * before, no cycle. Skips the checks those rule out (about 3× faster on a 1 KB result); the result is the
 * same. Never pass it anything else.
 *
 * The value is not recorded as deep-frozen: a WeakMap entry per decoded value cost about 0.6 µs (0.2–1.0
 * over 16 rounds) of a 1.3–2.0 µs parse-and-freeze of a 1 KB result, the scavenges' work on the entries
 * included (bench/profiles/freeze-record-cost.mjs), and every owner and follower decodes one. A decoded value
 * that later reaches `deepFreeze` (a supplier returning another flight's value) is walked once more:
 * its nodes are frozen already, and it counts the same bytes.
 */
export function deepFreezeParsedJson(value: unknown): number {
  if (typeof value !== 'object' || value === null) return leafBytes(value);
  let bytes = 0;
  const stack: object[] = [value];
  while (stack.length > 0) {
    const node = stack.pop() as Record<string, unknown>;
    bytes += 16;
    Object.freeze(node);
    for (const key in node) {
      bytes += 8 + key.length;
      const child = node[key];
      if (typeof child === 'object' && child !== null) stack.push(child);
      else bytes += leafBytes(child);
    }
  }
  return bytes;
}
