/** Terminal tables, BENCHMARKS.md and the target verdicts, all from the rows of one run. */
import { cpus, totalmem, release, platform } from 'node:os';
import type { ResultRow } from './context.js';
import type { BenchRun } from './bench.js';
import { FLIGHT_CONTENDERS } from './contenders/index.js';

type Col = [header: string, get: (r: ResultRow) => unknown];

const fmt = (v: unknown): string => {
  if (v === null || v === undefined) return '–';
  if (typeof v === 'number') return Number.isInteger(v) ? v.toLocaleString('en-US') : v.toLocaleString('en-US', { maximumFractionDigits: 2 });
  if (Array.isArray(v)) return v.map(fmt).join('/');
  if (typeof v === 'object') return Object.entries(v as Record<string, unknown>).map(([k, x]) => `${k} ${fmt(x)}`).join(', ');
  return String(v);
};

const TABLES: Record<string, { title: string; cols: Col[] }> = {
  herd: {
    title: '1. Herd — 3 processes × 100 concurrent callers, one key, upstream 100 ms',
    cols: [
      ['contender', (r) => r.contender],
      ['upstream calls (max/round)', (r) => r.upstreamCalls],
      ['per round', (r) => r.upstreamCallsPerRound],
      ['p50 ms', (r) => r.p50Ms],
      ['p99 ms', (r) => r.p99Ms],
      ['max ms', (r) => r.maxMs],
      ['overhead (p99−100) ms', (r) => r.overheadMs],
      ['p99 − naive p99 ms', (r) => r.overNaiveMs],
      ['errors', (r) => r.errors],
    ],
  },
  wakeup: {
    title: '2. Follower wake-up — owner completion → follower return (1 owner process, 2 follower processes × 5 callers)',
    cols: [
      ['contender', (r) => r.contender],
      ['flights', (r) => r.flights],
      ['upstream calls', (r) => r.upstreamCalls],
      ['samples', (r) => r.samples],
      ['p50 ms', (r) => r.p50Ms],
      ['p99 ms', (r) => r.p99Ms],
      ['max ms', (r) => r.maxMs],
      ['woken by', (r) => r.woken],
      ['errors', (r) => r.errors],
    ],
  },
  'distinct-keys': {
    title: '3. Distinct keys — owner flights/s in one process (64 in flight, 1 KB results), Redis commands per flight',
    cols: [
      ['contender', (r) => r.contender],
      ['ops/s', (r) => r.opsPerSec],
      ['% of raw', (r) => r.pctOfCeiling],
      ['p50 ms', (r) => r.p50Ms],
      ['p99 ms', (r) => r.p99Ms],
      ['client CPU %', (r) => r.clientCpuPct],
      ['Redis CPU %', (r) => r.redisCpuPct],
      ['client CPU µs / flight', (r) => r.clientCpuUsPerFlight],
      ['Redis CPU µs / flight', (r) => r.redisCpuUsPerFlight],
      ['round trips / owner', (r) => r.roundTrips],
      ['round trips / follower', (r) => r.followerRoundTrips],
      ['follower upstream calls', (r) => r.followerUpstreamCalls],
    ],
  },
  'many-waiters': {
    title: '4. Many waiters — 10,000 callers on 1,000 keys in one process, owners in another',
    cols: [
      ['contender', (r) => r.contender],
      ['connections (peak)', (r) => r.connections],
      ['connections opened', (r) => r.connectionsOpened],
      ['heap Δ MB', (r) => r.heapDeltaMB],
      ['RSS Δ MB', (r) => r.rssDeltaMB],
      ['upstream calls', (r) => r.upstreamCalls],
      ['still waiting at release', (r) => r.waitedForRelease],
      ['release→return p50 ms', (r) => r.p50Ms],
      ['p99 ms', (r) => r.p99Ms],
      ['max ms', (r) => r.maxMs],
      ['errors', (r) => r.errors],
    ],
  },
  footprint: {
    title: '5. Footprint — Redis memory per completed flight, keys left after the result TTL',
    cols: [
      ['contender', (r) => r.contender],
      ['result', (r) => `${Math.round(Number(r.resultBytes) / 1024)} KB JSON`],
      ['bytes / flight', (r) => r.bytesPerFlight],
      ['keys / flight', (r) => r.keysPerFlight],
      ['MEMORY USAGE / flight by type', (r) => r.memoryUsageByType],
      ['keys left after TTL', (r) => r.leftoverKeys],
      ['of which without TTL', (r) => r.leftoverWithoutTtl],
    ],
  },
};

function table(rows: ResultRow[], cols: Col[], markdown: boolean): string {
  const cells = rows.map((r) => cols.map(([, get]) => fmt(get(r))));
  const headers = cols.map(([h]) => h);
  if (markdown) {
    const line = (xs: string[]) => `| ${xs.join(' | ')} |`;
    return [line(headers), line(headers.map((_, i) => (i === 0 ? '---' : '---:'))), ...cells.map(line)].join('\n');
  }
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (xs: string[]) => xs.map((x, i) => (i === 0 ? x.padEnd(widths[i]!) : x.padStart(widths[i]!))).join('  ');
  return [line(headers), widths.map((w) => '─'.repeat(w)).join('  '), ...cells.map(line)].join('\n');
}

export function renderTables(rows: ResultRow[], markdown: boolean): string {
  const out: string[] = [];
  for (const [scenario, spec] of Object.entries(TABLES)) {
    const these = rows.filter((r) => r.scenario === scenario);
    if (!these.length) continue;
    out.push(markdown ? `### ${spec.title}\n\n${table(these, spec.cols, true)}` : `\n${spec.title}\n${table(these, spec.cols, false)}`);
  }
  return out.join('\n\n');
}

export interface Verdict {
  target: string;
  contender: string;
  figure: string;
  met: boolean | null;
  why?: string;
}

/** Why a target is missed: the measured figures that limit it (shown only for missed targets). */
type Why = (row: ResultRow, rows: ResultRow[]) => string;

const pick = (rows: ResultRow[], scenario: string, contender: string) => rows.find((r) => r.scenario === scenario && r.contender === contender);

const WHY: Record<string, Why> = {
  'herd-calls': () => 'more than one node ran the upstream in some round: see `roles` and `upstreamCallsPerRound` in latest.json.',
  'herd-p99': (row, rows) => {
    const naive = pick(rows, 'herd', 'naive');
    const local = pick(rows, 'herd', 'local');
    const above = round2(Number(row.p99Ms) - Number(naive?.p99Ms));
    const floor =
      `in the same run the harness floor — \`naive\`, 300 callers with no coordination at all — had p99 ${fmt(naive?.p99Ms)} ms ` +
      `(\`local\`: ${fmt(local?.p99Ms)} ms)`;
    const rest =
      'Besides the 100 ms upstream, a flight adds the owner\'s acquire + markRunning before the upstream and complete after ' +
      `it (3 scripts of ${perScript(rows, row.contender)} of Redis CPU each in this run), the followers' notice (it carries results up to ` +
      '`inlineResultBytes`; a larger one costs one more `acquire`) → decode, and resolving 100 callers per process, while 3 worker processes, redis-server and whatever else runs on the ' +
      'machine share 2 cores (see the load average above).';
    if (above !== null && above <= 0) return `${floor}, i.e. the flight's p99 is at or below the floor: timer and scheduling jitter of this machine, not coordination, sets the miss. ${rest}`;
    return `${floor}, so ${fmt(row.p99Ms)} ms is ${fmt(above)} ms above the floor. ${rest}`;
  },
  wakeup: (row, rows) =>
    `p50 is ${fmt(row.p50Ms)} ms against a bare PUBLISH→SUBSCRIBE hop of ${fmt(pick(rows, 'wakeup', 'raw PUBLISH→SUBSCRIBE hop')?.p50Ms)} ms ` +
    `(p99 ${fmt(pick(rows, 'wakeup', 'raw PUBLISH→SUBSCRIBE hop')?.p99Ms)} ms) in the same run. The follower makes no Redis call after the ` +
    'notice (a result up to `inlineResultBytes` rides in it), but it still verifies and decodes it (base64 + inflate + SHA-256 + JSON, ' +
    'as for any stored result) and resolves its callers: that and the event-loop turn of a busy process is the gap to the bare hop. ' +
    'The p99/max tail is scheduling: the owner, two follower processes and redis-server compete for 2 cores with other work at ' +
    'that moment.',
  'distinct-ceiling': (row, rows) => {
    const raw = pick(rows, 'distinct-keys', 'raw-evalsha');
    const us = Number(row.redisCpuUsPerFlight);
    const cap = us > 0 ? Math.round(1e6 / us) : null;
    const capPct = cap && raw?.opsPerSec ? round2((100 * cap) / Number(raw.opsPerSec)) : null;
    return (
      `Redis spent ${fmt(row.redisCpuUsPerFlight)} µs of CPU per flight (the trivial pipelined script: ${fmt(raw?.redisCpuUsPerFlight)} µs), ` +
      `so even with one Redis core fully busy flights would cap at about ${fmt(cap)}/s = ${fmt(capPct)}% of the ceiling. ` +
      'Each owner flight runs three scripts in sequence (acquire, markRunning, complete): each reads the whole metadata hash ' +
      '(HGETALL of 18 fields, needed for the fence checks and for the full-metadata reply the state machine specifies) and ' +
      'writes only what the transition changes (acquire creates the record: DEL + HSET of 18 fields; markRunning and complete: ' +
      'HSET of 4 fields) + PEXPIRE, and complete also SETs the result, XADDs to the flight\'s ' +
      `stream and PUBLISHes the notice (with the result when small). The client spent ${fmt(row.clientCpuUsPerFlight)} µs of CPU per flight (\`local\`, the same core ` +
      `without Redis: ${fmt(pick(rows, 'distinct-keys', 'local')?.clientCpuUsPerFlight)} µs). Neither CPU figure reaches 100% in the ` +
      'window because both share 2 cores with the rest of the machine. The 25% target assumes a flight costs about as much as two ' +
      'trivial scripts; with this state machine it costs ~100×.'
    );
  },
  'distinct-owner-rt': (row) => `the owner path sends ${fmt(row.ownerCommands)} per flight.`,
  'distinct-follower-rt': (row) =>
    `the follower sends ${fmt(row.followerCommands)} per flight: \`acquire\` (FOLLOWER_WAIT), then the wake-up. ` +
    'The coordinator re-reads (the `read` script) only when its subscription was not yet live when the acquire was sent or ' +
    'reconnected since, and core calls `acquire` again only when the result is larger than `inlineResultBytes` or fails to verify.',
  waiters: (row) => `the waiting process held ${fmt(row.connections)} connections at the peak.`,
  leftover: (row) => `${fmt(row.leftoverKeys)} keys outlived the result TTL, e.g. ${fmt(row.leftoverSamples)}.`,
};

/** Redis CPU per script of our owner flight (three scripts), from the distinct-keys row of the same contender. */
const perScript = (rows: ResultRow[], contender: string): string => {
  const us = Number(pick(rows, 'distinct-keys', contender)?.redisCpuUsPerFlight);
  return Number.isFinite(us) && us > 0 ? `~${Math.round(us / 3)} µs` : 'tens of µs';
};

const round2 = (x: number) => (Number.isFinite(x) ? Math.round(x * 100) / 100 : null);

export function verdicts(rows: ResultRow[], flightNames: readonly string[] = FLIGHT_CONTENDERS): Verdict[] {
  const out: Verdict[] = [];
  const find = (scenario: string, contender: string) => rows.filter((r) => r.scenario === scenario && r.contender === contender);
  const ceiling = pick(rows, 'distinct-keys', 'raw-evalsha')?.opsPerSec ?? null;
  const add = (target: string, contender: string, figure: string, met: boolean | null, key: string, row: ResultRow) =>
    out.push({ target, contender, figure, met, ...(met === false ? { why: WHY[key]?.(row, rows) } : {}) });
  for (const name of flightNames) {
    const herd = find('herd', name)[0];
    if (herd) {
      const perRound = (herd.upstreamCallsPerRound as number[] | undefined) ?? [];
      add('Herd: exactly 1 upstream call', name, `${fmt(perRound)} per round`, perRound.length > 0 && perRound.every((n) => n === 1), 'herd-calls', herd);
      const limit = Number(herd.upstreamMs) + 5;
      const naive = pick(rows, 'herd', 'naive');
      const floor = naive ? ` (naive p99 ${fmt(naive.p99Ms)} ms)` : '';
      add(`Herd: p99 ≤ upstream + 5 ms (${limit} ms)`, name, `p99 ${fmt(herd.p99Ms)} ms${floor}`, herd.p99Ms !== null && herd.p99Ms <= limit, 'herd-p99', herd);
    }
    const wake = find('wakeup', name)[0];
    if (wake) add('Follower wake-up p99 ≤ 1 ms', name, `p50 ${fmt(wake.p50Ms)} ms, p99 ${fmt(wake.p99Ms)} ms`, wake.p99Ms !== null && wake.p99Ms <= 1, 'wakeup', wake);
    const d = find('distinct-keys', name)[0];
    if (d) {
      add('Distinct keys ≥ 25% of the raw EVALSHA ceiling', name, `${fmt(d.opsPerSec)}/s = ${fmt(d.pctOfCeiling)}% of ${fmt(ceiling)}/s`, Number(d.pctOfCeiling) >= 25, 'distinct-ceiling', d);
      add('≤ 3 round trips per owner flight', name, `${fmt(d.roundTrips)} (${fmt(d.ownerCommands)})`, d.roundTrips !== null && Number(d.roundTrips) <= 3, 'distinct-owner-rt', d);
      add(
        'Follower: 1 round trip + the wake-up',
        name,
        `${fmt(d.followerRoundTrips)} (${fmt(d.followerCommands)})`,
        d.followerRoundTrips !== null && Number(d.followerRoundTrips) <= 2,
        'distinct-follower-rt',
        d,
      );
    }
    const w = find('many-waiters', name)[0];
    if (w) add('Many waiters: ≤ 4 connections per process', name, `${fmt(w.connections)} (opened ${fmt(w.connectionsOpened)})`, w.connections !== null && Number(w.connections) <= 4, 'waiters', w);
    const f = find('footprint', name);
    if (f.length) {
      const worst = f.reduce((a, b) => (Number(b.leftoverKeys) > Number(a.leftoverKeys) ? b : a));
      add('Keys left after the result TTL = 0', name, String(worst.leftoverKeys), Number(worst.leftoverKeys) === 0, 'leftover', worst);
    }
  }
  return out;
}

function machine(): string {
  const cpu = cpus();
  return `${cpu[0]?.model ?? 'unknown CPU'}, ${cpu.length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB RAM, ${platform()} ${release()}, Node ${process.version}`;
}

export function renderMarkdown(run: BenchRun, command: string): string {
  const v = verdicts(run.rows);
  const mark = (m: boolean | null) => (m === null ? '–' : m ? 'met' : '**missed**');
  const missed = v.filter((x) => x.met === false);
  const lines = [
    '# Benchmarks',
    '',
    '<!-- Generated by `pnpm bench` (bench/src/report.ts): do not edit by hand; run it again. -->',
    '',
    `Latest run: ${run.startedAt} — \`${command}\`${run.quick ? ' (quick mode: fewer rounds and shorter windows)' : ''}, ${(run.durationMs / 1000).toFixed(0)} s.`,
    '',
    `Machine: ${machine()}; redis-server ${run.redis.version} (${run.redis.own ? 'a server of its own on a free port, started by the run' : 'external'}), loopback.`,
    `Load average (1 min) at the start / end of the run: ${run.load.map((x) => x.toFixed(2)).join(' / ')} — the bench processes, redis-server and`,
    'anything else running share the cores, so figures move between runs; compare contenders within one run.',
    'Every contender runs in the same run against the same Redis and the same simulated upstream. Raw figures: `bench/results/latest.json`.',
    '',
    ...(run.skipped.length ? ['Not measured in this run: ' + run.skipped.map((s) => `\`${s.contender}\` (${s.reason})`).join(', ') + '.', ''] : []),
    '## Targets',
    '',
    '| target | contender | figure | verdict |',
    '|---|---|---|---|',
    ...v.map((x) => `| ${x.target} | ${x.contender} | ${x.figure} | ${mark(x.met)} |`),
    '',
    ...(missed.length ? ['### Where a target is missed, and why', '', ...missed.map((x) => `- **${x.target}** (${x.contender}: ${x.figure}): ${x.why ?? ''}`), ''] : []),
    '## Results',
    '',
    renderTables(run.rows, true),
    '',
    '## How it is measured',
    '',
    '- **Contenders**: `naive` calls the upstream on every call; `local` is `@flight/core` in `local` mode; `redlock` is the usual',
    '  recipe (GET the cache, `redlock.acquire` with the library defaults — 10 retries, 200 ms delay, 200 ms jitter — GET again,',
    '  call, SET with a TTL, release); `bentocache` is `getOrSet` with a memory L1 and the Redis L2 driver (no bus);',
    '  `flight-ioredis` and `flight-node-redis` are `@flight/core` in `distributed` mode on our coordinators. Both flight',
    '  contenders and `local` run with the L1 replay cache off and the guard\'s bulkhead, retry and circuit breaker off, so only',
    '  coordination is measured.',
    '- **Upstream**: sleeps for the scenario\'s time and returns a JSON object of text fields (1 KB or 100 KB serialized; deflate',
    '  shrinks it about 2–3×, like prose). Upstream calls are counted with a Redis `INCR` shared by all processes (scenarios 1, 2, 4)',
    '  or in-process (3).',
    '- **Clock**: latencies across processes use `process.hrtime` (CLOCK_MONOTONIC, shared by every process on one Linux machine).',
    '- **Herd**: 3 forked worker processes × 100 concurrent callers, started together on the shared clock; one warm-up round on',
    '  another key first. Latency is each caller\'s own call time; "upstream calls" is the worst round.',
    '- **Wake-up**: per flight the owner process calls first, two follower processes (5 callers each) join 5 ms later, the',
    '  upstream takes 20 ms. A sample is the follower\'s return minus the moment the owner\'s `complete` (or, for redlock, its',
    '  cache `SET`) returned. Only contenders whose followers wait for another process are listed: `bentocache` and `local`',
    '  run the upstream once per process instead (see the herd), `naive` never waits. The two "raw … hop" rows are the bare',
    '  notification in the same run (writer sends PUBLISH / XADD → another connection receives it), a floor, not contenders.',
    '- **Distinct keys**: 64 concurrent loops of flights on fresh keys with an instant upstream, for a fixed window after a',
    '  warm-up; the raw ceiling (pipelined `EVALSHA` of `return 1`) is measured before and after the contenders and the higher',
    '  figure is kept. Round trips are the commands each client sends, counted by a TCP proxy between client and Redis',
    '  (commands run inside Lua scripts do not cross the wire and are not counted): the owner figure over sequential flights,',
    '  the follower figure with a second instance (another "node") joining 5 ms after the owner, one flight at a time, so',
    '  nothing is amortised across followers.',
    '- **Many waiters**: a worker holds 1,000 owners open (their upstream waits for a gate); another worker parks 10 callers',
    '  on each key. Connections = peak `connected_clients` during the wait minus before the waiting worker set up its',
    '  contender (sampled every 20 ms); memory = `process.memoryUsage()` after a forced GC, while everyone waits, minus before',
    '  the callers started. Then the 1,000 owners are released at once (their upstream returns) and the table shows how long',
    '  after that release the waiters returned (this includes the owners completing 1,000 flights).',
    '- **Footprint**: `used_memory` before and after N flights (results kept for 10 minutes) divided by N; then flights',
    '  with a 1 s result TTL, and 1.5 s after the last one every remaining key under the contender\'s prefix is checked with',
    '  `PTTL` (which also expires keys past their TTL). The flight\'s event stream is most of its footprint: Redis 7.0',
    '  preallocates a stream\'s first node to `stream-node-max-bytes` (default 4096), so a one-entry stream takes about',
    '  4.7 KB; with `CONFIG SET stream-node-max-bytes 256` (flight entries are tiny) the same stream takes about 0.9 KB',
    '  (measured with `MEMORY USAGE` on redis-server 7.0.15). The benchmark keeps the server default.',
    '',
  ];
  return lines.join('\n');
}
