/**
 * Self time of a .cpuprofile per package and per frame, divided by a count of calls or requests:
 * `node bench/profiles/by-package.mjs file.cpuprofile <calls> [frames]` (µs per call; the tables of http.md
 * Wave 10 and openai-overhead.md). Our packages show as `flight:<dir>`, dependencies by package name, Node's
 * own modules as `node:<module>`, and V8's pseudo-frames ((garbage collector), (idle), (program)) as they are.
 */
import { readFileSync } from 'node:fs';

const [file, callsArg, framesArg] = process.argv.slice(2);
if (!file || !callsArg) {
  console.error('usage: node bench/profiles/by-package.mjs file.cpuprofile <calls> [frames]');
  process.exit(2);
}
const calls = Number(callsArg);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const selfTime = new Map();
profile.samples.forEach((id, i) => selfTime.set(id, (selfTime.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));

/** The group a frame's script belongs to. */
function groupOf(url, functionName) {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  if (url.includes('/packages/')) return `flight:${url.split('/packages/')[1].split('/')[0]}`;
  const dependency = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?(@[^/]+\/[^/]+|[^/]+)/.exec(url);
  if (dependency) return dependency[1];
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  return url.split('/').slice(-2).join('/');
}

const groups = new Map();
const frames = new Map();
for (const [id, time] of selfTime) {
  const { functionName, url, lineNumber } = byId.get(id).callFrame;
  const group = groupOf(url, functionName || '');
  groups.set(group, (groups.get(group) ?? 0) + time);
  const frame = `${functionName || '(anonymous)'} ${url.split('/').slice(-3).join('/')}:${lineNumber + 1}`;
  frames.set(frame, (frames.get(frame) ?? 0) + time);
}
const perCall = (time) => `${(time / calls).toFixed(2).padStart(8)} µs`;
for (const [group, time] of [...groups].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(perCall(time), group);
console.log('--- frames');
for (const [frame, time] of [...frames].sort((a, b) => b[1] - a[1]).slice(0, Number(framesArg ?? 30))) console.log(perCall(time), frame);
