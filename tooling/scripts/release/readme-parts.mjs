// The parts of a README a new user acts on: the install line and the runnable TypeScript examples, with the
// texts their `// prints: …` comments promise. Read by the release's examples check and by
// apps/readme-examples, so that both see the same examples.

const FENCE = /^```(\S*)(?:[ \t]+(\S+))?\s*$/;

/** Each fenced block of `markdown`: its language, its flag (```ts fragment), its 1-based fence line and its body. */
function blocks(markdown) {
  const found = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]);
    if (!open || !open[1]) continue;
    const line = i + 1;
    const body = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]); i++) body.push(lines[i]);
    found.push({ lang: open[1], flag: open[2], line, body });
  }
  return found;
}

/**
 * The runnable TypeScript examples of a README (```ts blocks; ```ts fragment blocks are variations, counted
 * in `fragments`), with the texts their `// prints: …` comments promise, in order.
 */
export function readmeExamples(markdown) {
  return examplesOf(blocks(markdown));
}

function examplesOf(found) {
  const examples = [];
  for (const block of found) {
    if (block.lang !== 'ts' && block.lang !== 'typescript') continue;
    if (block.flag === 'fragment') continue;
    const code = block.body.join('\n');
    const prints = [...code.matchAll(/\/\/\s*prints:\s*(.+?)\s*$/gm)].map((m) => m[1]);
    examples.push({ line: block.line, code, prints });
  }
  return examples;
}

/** How many ```ts fragment blocks are among `found`. */
function fragmentsOf(found) {
  return found.filter((b) => (b.lang === 'ts' || b.lang === 'typescript') && b.flag === 'fragment').length;
}

/** The packages a README's install line names (the first `npm i` / `npm install` of its first `sh` block that has one). */
export function installLine(markdown) {
  return installOf(blocks(markdown));
}

function installOf(found) {
  for (const block of found) {
    if (block.lang !== 'sh' && block.lang !== 'bash') continue;
    const command = block.body.find((l) => /^\s*npm\s+(i|install)\s/.test(l));
    if (command)
      return command
        .trim()
        .split(/\s+/)
        .slice(2)
        .filter((word) => !word.startsWith('-'));
  }
  return [];
}

/** The install line, the runnable examples and the number of fragments of a README, from one reading of it. */
export function readmeParts(markdown) {
  const found = blocks(markdown);
  return { install: installOf(found), examples: examplesOf(found), fragments: fragmentsOf(found) };
}

/** The first promised text `output` does not print (in order), or undefined when it keeps every one. */
export function firstUnkept(prints, output) {
  let from = 0;
  for (const promise of prints) {
    const at = output.indexOf(promise, from);
    if (at < 0) return promise;
    from = at + promise.length;
  }
  return undefined;
}
