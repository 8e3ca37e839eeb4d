// Prints the top self-time frames of a .cpuprofile: `node top-frames.mjs file.cpuprofile [n]`.
import { readFileSync } from 'node:fs';
const profile = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const n = Number(process.argv[3] ?? 15);
const self = new Map();
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const dt = new Map();
profile.samples.forEach((id, i) => dt.set(id, (dt.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
let total = 0;
for (const [id, t] of dt) {
  const { functionName, url, lineNumber } = byId.get(id).callFrame;
  const name = `${functionName || '(anonymous)'} ${url.split('/').slice(-2).join('/')}:${lineNumber + 1}`;
  self.set(name, (self.get(name) ?? 0) + t);
  total += t;
}
for (const [name, t] of [...self].sort((a, b) => b[1] - a[1]).slice(0, n))
  console.log(`${((100 * t) / total).toFixed(1).padStart(5)} %  ${name}`);
