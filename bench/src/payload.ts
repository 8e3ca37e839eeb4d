/**
 * Deterministic JSON results of a given serialized size, shaped like an AI evaluation (text fields
 * from a vocabulary): they compress like real text, not like random bytes or repeated characters.
 */
const SYLLABLES = 'ka to ri me sa lu ne po chi da ve mo ru ti lo be shi ga fe nu zo ha ki pe yo wa re mi so tu'.split(' ');

/** A 4,000-word pseudo-vocabulary: deflate compresses the text about 3x, like prose. */
const WORDS: string[] = (() => {
  const next = rng(7);
  const words: string[] = [];
  for (let i = 0; i < 4000; i++) {
    const n = 1 + Math.floor(next() * 4);
    let w = '';
    for (let j = 0; j < n; j++) w += SYLLABLES[Math.floor(next() * SYLLABLES.length)];
    words.push(w);
  }
  return words;
})();

function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 0x100000000;
  };
}

export interface Evaluation {
  id: string;
  score: number;
  model: string;
  sections: { title: string; text: string }[];
}

/** A JSON-serializable object whose `JSON.stringify` is `bytes` long (± a few bytes). */
export function makePayload(bytes: number, seed = 42): Evaluation {
  const next = rng(seed);
  const word = () => WORDS[Math.floor(next() * WORDS.length)]!;
  const value: Evaluation = { id: `eval-${seed}`, score: Math.round(next() * 100) / 10, model: 'sim-1', sections: [] };
  const base = JSON.stringify(value).length;
  let size = base;
  let n = 0;
  while (size < bytes) {
    const overhead = `{"title":"s${n}","text":""},`.length;
    const room = bytes - size - overhead;
    if (room <= 0) break;
    let text = '';
    while (text.length < Math.min(room, 400)) text += (text ? ' ' : '') + word();
    text = text.slice(0, Math.min(room, 400));
    value.sections.push({ title: `s${n}`, text });
    n++;
    size = JSON.stringify(value).length;
  }
  return value;
}
