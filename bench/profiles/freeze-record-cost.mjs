/**
 * What recording a decoded value as deep-frozen costs: JSON.parse of a 1 KB result then a freeze walk,
 * with and without a WeakMap entry per value, 64 values kept alive as in-flight flights are; CPU µs per
 * value, the process's GC included (process.cpuUsage). `node bench/profiles/freeze-record-cost.mjs`
 */
const text = 'lorem ipsum dolor sit amet '.repeat(40);
const payload = JSON.stringify({ id: 1, title: text.slice(0, 100), body: text.slice(0, 870) });
const recorded = new WeakMap();

function freeze(value, record) {
  let bytes = 0;
  const stack = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    bytes += 16;
    Object.freeze(node);
    for (const key in node) {
      bytes += 8 + key.length;
      const child = node[key];
      if (typeof child === 'object' && child !== null) stack.push(child);
      else bytes += typeof child === 'string' ? 16 + 2 * child.length : 16;
    }
  }
  if (record) recorded.set(value, bytes);
  return bytes;
}

const inFlight = new Array(64);
function perValue(record, n) {
  const before = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const value = JSON.parse(payload);
    freeze(value, record);
    inFlight[i & 63] = value;
  }
  const used = process.cpuUsage(before);
  return +((used.user + used.system) / n).toFixed(3);
}

for (let round = 0; round < 4; round++) {
  console.log(JSON.stringify({ round, recordedUs: perValue(true, 500_000), notRecordedUs: perValue(false, 500_000) }));
}
