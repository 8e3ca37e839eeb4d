/** Terminal tables, BENCHMARKS.md and the target verdicts, all from the rows of one run. */
import { cpus, totalmem, release, platform } from 'node:os';
import type { ResultRow } from './context.js';
import type { BenchRun } from './bench.js';
import { renderProfileNotes, type ProfileNote } from './profiles.js';
import { verdictBefore, type RecordedRun } from './run-history.js';
import { fmt, verdictLabel, verdicts, type Verdict } from './targets.js';

export { verdicts, type Verdict } from './targets.js';

type Col = [header: string, get: (r: ResultRow) => unknown];

/** The columns of the distinct-keys tables (on the run's Redis and on Valkey). */
const DISTINCT_KEY_COLS: Col[] = [
  ['contender', (r) => r.contender],
  ['ops/s', (r) => r.opsPerSec],
  ['× best peer', (r) => r.vsBestPeer],
  ['% of raw', (r) => r.pctOfCeiling],
  ['p50 ms', (r) => r.p50Ms],
  ['p99 ms', (r) => r.p99Ms],
  ['client CPU %', (r) => r.clientCpuPct],
  ['Redis CPU %', (r) => r.redisCpuPct],
  ['client CPU µs / flight', (r) => r.clientCpuUsPerFlight],
  ['Redis CPU µs / flight', (r) => r.redisCpuUsPerFlight],
  ['Redis CPU × cache-manager', (r) => r.redisCpuVsCacheManager],
  ['round trips / owner', (r) => r.roundTrips],
  ['round trips / follower', (r) => r.followerRoundTrips],
  ['+ (un)subscribe / follower', (r) => r.followerSubscriptionCommands],
  ['follower upstream calls', (r) => r.followerUpstreamCalls],
];

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
      ['p50 / hop p50 (another process)', (r) => r.vsHopP50],
      ['p50 / in-process hop p50', (r) => r.vsInProcessHopP50],
      ['woken by', (r) => r.woken],
      ['errors', (r) => r.errors],
    ],
  },
  'distinct-keys': {
    title: '3. Distinct keys — owner flights/s in one process (64 in flight, 1 KB results), Redis commands per flight',
    cols: DISTINCT_KEY_COLS,
  },
  'distinct-keys-valkey': {
    title:
      '3b. Distinct keys on Valkey 8.1 (a server with `SET … IFEQ`, as Redis ≥ 8.4) — the same scenario, every Redis contender on one valkey-server of the run',
    cols: [['server', (r) => r.server ?? r.reason], ...DISTINCT_KEY_COLS],
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
      ['used_memory Δ / flight', (r) => r.usedMemoryPerFlight],
      ['× bentocache', (r) => r.vsBentocache],
      ['keys / flight', (r) => r.keysPerFlight],
      ['MEMORY USAGE / flight by type', (r) => r.memoryUsageByType],
      ['keys left after TTL', (r) => r.leftoverKeys],
      ['of which without TTL', (r) => r.leftoverWithoutTtl],
    ],
  },
  'fan-out': {
    title: '6. Fan-out — 8 waiter processes, each waiting only on its own keys, owners in another process',
    cols: [
      ['contender', (r) => r.contender],
      ['topology', (r) => r.topology],
      [
        'process / master',
        (r) => (r.kind === 'master' ? `master :${fmt(r.port)}` : r.kind === 'process' ? `process ${fmt(r.process)}` : 'not run'),
      ],
      ['own flights', (r) => r.ownFlights],
      ['notices received', (r) => r.noticesReceived],
      ['foreign notices', (r) => r.foreignNotices],
      ['subscriber bytes', (r) => r.subscriberBytes],
      ['channels', (r) => r.channels],
      [
        'observed: notices / foreign / bytes',
        (r) => (r.kind === 'process' ? [r.observedNotices, r.observedForeignNotices, r.observedSubscriberBytes] : null),
      ],
      ['connections opened (per master)', (r) => r.connectionsOpened],
      ['flights owned / notices published', (r) => (r.kind === 'master' ? [r.flightsOwned, r.noticesPublished] : null)],
      ['bus publish received', (r) => r.busPublishReceived],
      [
        'shard channels (other slots)',
        (r) => (r.kind === 'master' ? `${fmt(r.shardChannels)} (${fmt(r.shardChannelsOfOtherSlots)})` : null),
      ],
      ['upstream calls', (r) => r.upstreamCalls],
      ['errors / reason', (r) => r.errors ?? r.reason],
    ],
  },
  http: {
    title: '7. HTTP — an Express route returning 1 KB of JSON: plain, behind `@flight/express`, behind a Redis response cache (autocannon)',
    cols: [
      ['URLs', (r) => r.urls],
      ['contender', (r) => r.contender],
      ['req/s', (r) => r.reqPerSec],
      ['× plain', (r) => r.vsPlain],
      ['× redis-cache', (r) => r.vsRedisCache],
      ['server CPU µs / req', (r) => r.serverCpuUsPerReq],
      ['handler runs', (r) => r.upstreamCalls],
      ['handler runs / burst', (r) => r.handlerRunsPerBurst],
      ['p50 ms', (r) => r.p50Ms],
      ['p99 ms', (r) => r.p99Ms],
      ['non-2xx', (r) => r.non2xx],
      ['errors', (r) => r.errors],
    ],
  },
  'forget-reach': {
    title: "10. Forget reaching other nodes' L1 — 4 nodes; B and C hold L1 copies, D none; A forgets each flight",
    cols: [
      ['contender', (r) => r.contender],
      ['flights', (r) => r.flights],
      ['samples', (r) => r.samples],
      ['forget resolved → copy dropped p50 / p99 / max ms', (r) => [r.p50Ms, r.p99Ms, r.maxMs]],
      ['stale reads after it', (r) => r.staleReads],
      ['copies not reached', (r) => r.notHeard],
      ['notices at the node without a copy', (r) => r.noticesAtNodeWithoutCopy],
    ],
  },
  stream: {
    title: '8. Streaming herd — 3 processes × 100 callers of one streamed key, upstream 50 chunks over 1 s',
    cols: [
      ['contender', (r) => r.contender],
      ['upstream calls (max/round)', (r) => r.upstreamCalls],
      ['per round', (r) => r.upstreamCallsPerRound],
      ['first chunk p50 ms', (r) => r.p50Ms],
      ['first chunk p99 ms', (r) => r.p99Ms],
      ['owner first chunk ms', (r) => r.ownerFirstChunkMs],
      ['follower first chunk − owner p50 / p99 ms', (r) => [r.followerFirstChunkVsOwnerP50Ms, r.followerFirstChunkVsOwnerP99Ms]],
      ['chunk lag behind owner p50 / p99 ms', (r) => [r.chunkLagP50Ms, r.chunkLagP99Ms]],
      ['other processes only: first chunk / chunk lag p99 ms', (r) => [r.remoteFirstChunkVsOwnerP99Ms, r.remoteChunkLagP99Ms]],
      ['Redis bytes / flight', (r) => r.redisBytesPerFlight],
      ['Redis traffic / flight', (r) => r.redisTrafficBytesPerFlight],
      ['CPU ms / flight: processes / Redis', (r) => [r.clientCpuMsPerFlight, r.redisCpuMsPerFlight]],
      ['incomplete sequences', (r) => r.incompleteSequences],
      ['errors', (r) => r.errors],
    ],
  },
  openai: {
    title:
      '11. Model calls through @flight/openai — uncontended calls to a model answering in ~1 ms (floor: the bare call after one Redis round trip); 3 nodes × 100 callers of one call (50 ms)',
    cols: [
      ['contender', (r) => r.contender],
      ['uncontended call p50 / mean ms', (r) => [r.uncontendedP50Ms, r.uncontendedMeanMs]],
      ['overhead over the bare SDK p50 / mean ms', (r) => [r.overheadP50Ms, r.overheadMeanMs]],
      ['herd: upstream calls (max/round)', (r) => r.upstreamCalls],
      ['per round', (r) => r.upstreamCallsPerRound],
      ['herd callers p50 / p99 ms', (r) => [r.p50Ms, r.p99Ms]],
    ],
  },
  expiry: {
    title:
      '12. Expiry under load — 8 processes × 500 callers on a key just past its fresh time (inside its stale window), beside 500 on a fresh key in the same bursts; upstream 200 ms',
    cols: [
      ['contender', (r) => r.contender],
      ['upstream calls (max/round)', (r) => r.upstreamCalls],
      ['per round', (r) => r.upstreamCallsPerRound],
      ['callers p50 / p99 / max ms', (r) => [r.p50Ms, r.p99Ms, r.maxMs]],
      ['fresh replay p50 / p99 ms', (r) => [r.freshP50Ms, r.freshP99Ms]],
      ['p99 − fresh replay p99 ms', (r) => r.overFreshP99Ms],
      ['answered as', (r) => r.roles],
      ['errors', (r) => r.errors],
    ],
  },
  'stream-resume': {
    title: '9. Resumable streams — resume latency, and Redis commands per streamed chunk by followers and processes',
    cols: [
      ['contender', (r) => r.contender],
      ['resume during the run: first chunk p50 / p99 ms', (r) => [r.resumeDuringRunP50Ms, r.resumeDuringRunP99Ms]],
      ['resume after the run: first chunk p50 / p99 ms', (r) => [r.resumeAfterRunP50Ms, r.resumeAfterRunP99Ms]],
      ['resumes', (r) => r.resumes],
      ['incomplete sequences', (r) => r.incompleteSequences],
      ...(['1p×1f', '1p×10f', '1p×100f', '3p×1f', '3p×10f', '3p×100f'] as const).map((k): Col => [
        `${k}: Redis commands / bytes per chunk`,
        (r) => {
          const c = (r.commandsPerChunk as Record<string, { commandsPerChunk: number; bytesPerChunk: number }> | undefined)?.[k];
          return c ? [c.commandsPerChunk, c.bytesPerChunk] : null;
        },
      ]),
    ],
  },
  'replica-ack': {
    title: '14. Replica acknowledgement — an uncontended call on a primary with one replica, without WAIT, with waitReplicas, strict',
    cols: [
      ['contender', (r) => r.contender],
      ['setting', (r) => r.setting],
      ['p50 ms', (r) => r.p50Ms],
      ['p99 ms', (r) => r.p99Ms],
      ['p50 over no WAIT, ms', (r) => r.overNoWaitP50Ms],
      ['calls', (r) => r.calls],
    ],
  },
  'ai-sdk': {
    title:
      '15. Model calls through @flight/ai-sdk (the AI SDK 7 and its OpenAI-compatible provider, on Node 22) — uncontended generateText calls to a model answering in ~1 ms (floor: the bare call after one Redis round trip); 3 nodes × 100 callers of one call (50 ms)',
    cols: [
      ['contender', (r) => r.contender],
      ['uncontended call p50 / mean ms', (r) => [r.uncontendedP50Ms, r.uncontendedMeanMs]],
      ['over the bare call p50 / mean ms', (r) => [r.overheadP50Ms, r.overheadMeanMs]],
      ['over the floor p50 ms', (r) => r.overFloorP50Ms],
      ['herd: upstream calls (max/round)', (r) => r.upstreamCalls],
      ['per round', (r) => r.upstreamCallsPerRound],
      ['herd callers p50 / p99 ms', (r) => [r.p50Ms, r.p99Ms]],
    ],
  },
  'resumable-stream': {
    title:
      '16. A drop-in for resumable-stream — one stream made on one server, 1 / 10 / 100 listeners resuming it on another (resumeExistingStream); Redis commands per part and per listener',
    cols: [
      ['contender', (r) => r.contender],
      ['listeners', (r) => r.listeners],
      ['Redis commands per part', (r) => r.commandsPerPart],
      ['per listener, once', (r) => r.commandsPerListener],
      ['commands for a 40-part stream', (r) => r.commandsPer40PartStream],
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

function machine(): string {
  const cpu = cpus();
  return `${cpu[0]?.model ?? 'unknown CPU'}, ${cpu.length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB RAM, ${platform()} ${release()}, Node ${process.version}`;
}

/**
 * BENCHMARKS.md for `run`. With `previous` (the last full run recorded before it, run-history.ts) the targets
 * table shows each target's verdict and figure in that run too, and counts the targets both runs met.
 */
export function renderMarkdown(run: BenchRun, command: string, profiles: readonly ProfileNote[] = [], previous?: RecordedRun): string {
  const v = verdicts(run.rows);
  const mark = (m: boolean | null) => (m === false ? '**MISS**' : verdictLabel(m));
  const missed = v.filter((x) => x.met === false);
  const before = (x: Verdict) => {
    const was = verdictBefore(previous, x);
    return was ? `${mark(was.met)} — ${was.figure}` : 'not measured';
  };
  const metTwice = v.filter((x) => x.met === true && verdictBefore(previous, x)?.met === true).length;
  const targetsTable = [
    ...(previous
      ? [
          `Beside each verdict, the one of the full run before this one (${previous.startedAt}, \`${previous.command}\`): a goal counts as met`,
          `when two full runs meet it. Met in both runs: ${metTwice} of ${v.length} targets.`,
          '',
        ]
      : []),
    `| target | contender | figure | verdict |${previous ? ' previous full run |' : ''}`,
    `|---|---|---|---|${previous ? '---|' : ''}`,
    ...v.map((x) => `| ${x.target} | ${x.contender} | ${x.figure} | ${mark(x.met)} |${previous ? ` ${before(x)} |` : ''}`),
  ];
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
    ...(run.skipped.length
      ? ['Not measured in this run: ' + run.skipped.map((s) => `\`${s.contender}\` (${s.reason})`).join(', ') + '.', '']
      : []),
    ...(run.failed.length
      ? ['Scenarios that failed in this run: ' + run.failed.map((f) => `\`${f.scenario}\` (${f.reason})`).join(', ') + '.', '']
      : []),
    '## Targets',
    '',
    "Each target compares figures of this one run (issue 10's acceptance list, with issue 47's goals for the unshared path; the limits are in `bench/src/targets.ts`).",
    'n/a = a figure it needs was not measured in this run.',
    '',
    ...targetsTable,
    '',
    ...(missed.length
      ? [
          '### Where a target is missed, and why',
          '',
          ...missed.map((x) => `- **${x.target}** (${x.contender}: ${x.figure}): ${x.why ?? ''}`),
          '',
        ]
      : []),
    '## Results',
    '',
    renderTables(run.rows, true),
    '',
    '## How it is measured',
    '',
    '- **Contenders**: `naive` calls the upstream on every call; `local` is `@flight/core` in `local` mode; `redlock` is the usual',
    '  recipe (GET the cache, `redlock.acquire` with the library defaults — 10 retries, 200 ms delay, 200 ms jitter — GET again,',
    '  call, SET with a TTL, release); `bentocache` is `getOrSet` with a memory L1 and the Redis L2 driver (no bus);',
    '  `cache-manager` is 7.x `wrap` over two Keyv stores, in-memory then `@keyv/redis` (the multi-store setup of its README);',
    '  `flight-ioredis` and `flight-node-redis` are `@flight/core` in `distributed` mode on our coordinators. Both flight',
    "  contenders and `local` run with the L1 replay cache off and the guard's bulkhead, retry and circuit breaker off, so only",
    '  coordination is measured.',
    `- **Packages**: ${run.library === 'built' ? 'the built @flight packages (`dist/`, what users install; `pnpm bench` builds them first)' : 'the TypeScript sources under tsx (`FLIGHT_BENCH_LIBRARY=source`)'}, in this process and in every process the run forks.`,
    "- **Upstream**: sleeps for the scenario's time and returns a JSON object of text fields (1 KB or 100 KB serialized; deflate",
    '  shrinks it about 2–3×, like prose). Upstream calls are counted with a Redis `INCR` shared by all processes (scenarios 1, 2, 4)',
    '  or in-process (3).',
    '- **Clock**: latencies across processes use `process.hrtime` (CLOCK_MONOTONIC, shared by every process on one Linux machine).',
    '- **Herd**: 3 forked worker processes × 100 concurrent callers, started together on the shared clock; one warm-up round on',
    '  another key first. Latency is each caller\'s own call time; "upstream calls" is the worst round.',
    '- **Wake-up**: per flight the owner process calls first, two follower processes (5 callers each) join 5 ms later, the',
    "  upstream takes 20 ms. A sample is the follower's return minus the moment the owner's `complete` (or, for redlock, its",
    '  cache `SET`) returned. Only contenders whose followers wait for another process are listed: `bentocache`,',
    '  `cache-manager` and `local` run the upstream once per process instead (see the herd), `naive` never waits. The',
    '  "raw … hop" rows are the bare notification in the same run (writer sends PUBLISH / XADD → another connection of the',
    '  harness process receives it), floors, not contenders. "…, another process" is the same PUBLISH received by a worker',
    "  process: what a follower's wake-up crosses (the receiving process is asleep and must be woken first), so the target",
    '  compares with it; the in-process PUBLISH hop, whose receiver is awake already, is shown beside it.',
    '- **Distinct keys**: 64 concurrent loops of flights on fresh keys with an instant upstream, in fixed windows after a',
    '  warm-up: 7 interleaved rounds (2 with `--quick`), every contender once per round in a rotated order, each figure the',
    '  median of its rounds (`roundOpsPerSec` in latest.json), so a drift of the machine over the run does not land on one contender. The target is the best of `cache-manager`, `bentocache` and `redlock` in the same run; the raw ceiling',
    '  (pipelined `EVALSHA` of `return 1`, measured before and after the contenders, the higher figure kept) is context. Redis',
    '  CPU per flight is the `used_cpu_user` + `used_cpu_sys` delta of the window divided by the flights. Round trips are the commands each client sends, counted by a TCP proxy between client and Redis',
    '  (commands run inside Lua scripts do not cross the wire and are not counted): the owner figure over sequential flights,',
    '  the follower figure with a second instance (another "node") joining 5 ms after the owner, one flight at a time, so',
    '  nothing is amortised across followers; (UN|S|P)SUBSCRIBE commands are counted apart from the round trips, and so is a',
    '  command the client writes in the same write right behind a (S|P)SUBSCRIBE on that connection (`evalsha behind',
    '  ssubscribe`: a RESP3 subscriber re-reading the flight behind its subscription): Redis runs it, the client waits for no',
    '  reply of its own.',
    '- **Distinct keys on Valkey 8.1** (3b): the same scenario and contenders that use Redis, on a valkey-server 8.1 of the',
    '  run (the one `npm test` builds, or `FLIGHT_VALKEY_SERVER`): a server with `SET … IFEQ`, on which a flight nobody',
    '  touched completes with that one command instead of the `complete` script (as on Redis ≥ 8.4). Its targets compare',
    '  the contenders on that server only.',
    '- **HTTP**: each server in its own process, autocannon (64 connections) in the bench process, a warm-up then a window per',
    '  server: 3 interleaved rounds (1 with `--quick`) in a rotated order; req/s and the other figures are the median of the',
    '  rounds (`roundReqPerSec` in latest.json), and `× plain` is the median of the per-round ratios to the plain route of the',
    '  same round, which the target reads (`× redis-cache` the same to the `redis-cache` route). `redis-cache` is the route behind',
    '  the least a Redis response cache does: a GET of the URL, and on a miss the route and a SET of its body with a TTL (no',
    '  coordination; apicache or express-redis-cache over Redis without their extras).',
    '- **Many waiters**: a worker holds 1,000 owners open (their upstream waits for a gate); another worker parks 10 callers',
    '  on each key. Connections = peak `connected_clients` during the wait minus before the waiting worker set up its',
    '  contender (sampled every 20 ms); memory = `process.memoryUsage()` after a forced GC, while everyone waits, minus before',
    '  the callers started. Then the 1,000 owners are released at once (their upstream returns) and the table shows how long',
    '  after that release the waiters returned (this includes the owners completing 1,000 flights).',
    "- **Footprint**: the `MEMORY USAGE` of every key under the contender's prefix after N flights (results kept for 10",
    '  minutes), summed and divided by the flights (by Redis type: how they split); beside it, context, the `used_memory`',
    "  delta of the window (less the clients' buffers), which other scenarios' keys expiring meanwhile can move either",
    "  way. Then flights with a 1 s result TTL, and 1.5 s after the last one every remaining key under the contender's",
    '  prefix is checked with `PTTL` (which also expires keys past their TTL).',
    '- **Fan-out**: one owner (the harness process) holds the flights of 8 forked waiter processes open; process i waits on',
    '  1–4 × N keys of its own (one caller per key); once every caller is parked and the subscriptions have settled',
    '  (`CLIENT LIST` sub + ssub + psub unchanged for 150 ms) the owners are released together, and the figures are read',
    "  when no notice has arrived for 150 ms. Per process: the coordinator's own counters (`notifications: { received,",
    "  foreign, bytes, channels }`, `–` where the coordinator has none; the target reads these first) and the harness's own",
    '  observation of the same thing ("observed"): each waiter process talks to Redis through a counting proxy (one per',
    '  master on Cluster) that reads the server→client stream of every connection that sent a (S|P)SUBSCRIBE — its bytes and',
    "  each pushed message; a message is foreign when it names none of the process's own flights' hash tags. The same on a",
    '  local 3-master Redis Cluster started by the run (ioredis `Cluster` with `shardedSubscribers: true`; node-redis',
    '  `createCluster`), plus per master: flights whose keys live there, notices published there (`INFO commandstats`',
    '  `cmdstat_publish` + `cmdstat_spublish` calls), publish messages received over the cluster bus (`CLUSTER INFO`',
    '  `cluster_stats_messages_publish*_received`), and, while the waiters are parked, `PUBSUB SHARDCHANNELS` with the slot',
    "  of each channel checked against the master's own slots.",
    '- **Streaming herd**: 3 forked worker processes × 100 concurrent callers of one key per round, started together on the shared',
    '  clock, each iterating the stream (`executeStream` for `local` and the flight contenders; `naive` iterates its own upstream',
    '  run). The upstream yields 50 chunks of 16 bytes, chunk i at (i + 1) × 20 ms after its start. "Behind the owner" is a',
    "  follower's receive time of chunk i minus the owner caller's receive time of the same chunk (the owner in its own process",
    '  when there is one, as in `local` mode); a `naive` caller is measured behind its own upstream run. Every caller checks it',
    '  received exactly the upstream\'s sequence ("incomplete sequences" counts those that did not). Redis bytes per flight is the',
    "  `MEMORY USAGE` of the keys the round created, read once the flight completed; traffic is the round's `total_net_input_bytes`",
    "  + `total_net_output_bytes` delta (all 300 callers). CPU per flight: the 3 processes' `process.cpuUsage()` over the round",
    "  (callers, upstream runs and coordination) and redis-server's `used_cpu_user` + `used_cpu_sys` delta.",
    '- **Model calls**: the fake model (OpenAI wire format over HTTP, answering in ~1 ms) in the harness process; per',
    '  iteration one uncontended chat call (a new prompt) through the bare SDK, each wrapped client and the floor, each',
    "  after 3 ms idle (no call pays for the previous one's leftover work), the order rotated per iteration; the floor is",
    '  the bare call after one `SET … NX PX … GET` to Redis — the one round trip any design that calls the model once',
    "  across the cluster must finish before it may call. Overheads are p50 (mean) minus the bare call's.",
    "- **Replica acknowledgement**: a primary and one replica of the scenario's own (two redis-servers, loopback); uncontended",
    '  `execute` calls on a new key each (the supplier answers at once), one after another, on each adapter without',
    "  `waitReplicas`, with it (`WAIT 1 1000` after each owner write) and strict (`unacknowledged: 'retry'`), the three",
    '  taking turns call by call; "over no WAIT" is the p50 minus the p50 without `waitReplicas` in the same loop.',
    '- **Model calls through the AI SDK**: the same loop with `generateText` of the AI SDK 7 (its OpenAI-compatible provider',
    '  against the fake model), the bare model, the model wrapped with `flightMiddleware` on each adapter and the floor, in a',
    '  process of its own on Node 22 (the AI SDK 7 needs it); "over the floor" is the p50 minus the floor\'s p50.',
    '- **resumable-stream**: `resumable-stream` 2.2 and `@flight/resumable-stream`, each as two contexts (two "servers") with',
    "  their own node-redis clients on the run's Redis; the producer holds its second part until every listener read the first.",
    '  Commands per part are the slope of `total_commands_processed` between a 40-part and an 80-part stream; per listener,',
    '  the 40-part figure with the most listeners minus with 1, over the listeners added.',
    '',
    ...renderProfileNotes(profiles),
  ];
  return lines.join('\n');
}
