/**
 * The targets of `pnpm bench` (issue 10's acceptance list, with issue 47's goals for the unshared path), evaluated from the rows of one run.
 *
 * Pure functions: `compareRows` adds the same-run comparison figures to the rows (they land in
 * bench/results/latest.json), `verdicts` turns the rows into PASS / MISS lines. A target whose
 * reference row is missing from the run (a contender or scenario not measured) is `met: null`.
 */
import type { ResultRow } from './context.js';
import { FLIGHT_CONTENDERS, PEER_CONTENDERS } from './contenders/index.js';

export interface Verdict {
  target: string;
  contender: string;
  figure: string;
  /** true = PASS, false = MISS, null = not measured in this run. */
  met: boolean | null;
  /** For a MISS: the measured figures that limit it. */
  why?: string;
}

/** The limits, in one place. */
export const LIMITS = {
  /**
   * Redis CPU per owner flight ≤ this × cache-manager's (issue 47): on Redis 7, and where `SET … IFEQ`
   * exists (Valkey 8.1), whose owner path needs no script.
   */
  redisCpuVsCacheManager: { 'distinct-keys': 1.5, 'distinct-keys-valkey': 1 } as Record<string, number>,
  /** Client CPU per owner flight ≤ this × cache-manager's (issue 47). */
  clientCpuVsCacheManager: 1,
  ownerRoundTrips: 2,
  /** Commands per follower besides the (un)subscription. */
  followerRoundTrips: 1,
  /** `local` ops/s ≥ this fraction of `naive`'s. */
  localVsNaive: 0.15,
  /** Bytes per completed 1 KB flight ≤ this × bentocache's. */
  footprint1kVsBentocache: 1.5,
  /** Herd p99 ≤ naive p99 + this. */
  herdOverNaiveMs: 5,
  /**
   * @flight/openai and @flight/ai-sdk: an uncontended call ≤ the floor (the bare call after one Redis round
   * trip, what a call made once across the cluster pays before it may call the model) + this (issue 47).
   */
  modelOverFloorMs: 0.15,
  /** @flight/resumable-stream: Redis commands per part may grow by at most this from the fewest to the most listeners. */
  streamPartCommandsGrowth: 0.5,
  /** Streaming herd: a follower's first chunk and every later chunk p99 ≤ this behind the owner's. */
  streamBehindOwnerMs: 5,
  /**
   * Wake-up p50 ≤ this × the bare PUBLISH→SUBSCRIBE hop's p50, the hop taken to another process as a
   * follower's wake-up is (the in-process hop, whose receiver is never asleep, is reported beside it).
   */
  wakeupVsHop: 2,
  /** Expiry under load: callers' p99 ≤ a fresh replay's p99 + this (issue 32). */
  expiryOverFreshMs: 1,
  /** Forget reaching other nodes' L1 (issue 28 item 3). */
  forgetReachP99Ms: 10,
  /** Fan-out: the largest subscriber bytes per own flight ≤ this × the smallest, across processes. */
  fanoutBytesSpread: 1.5,
  /** Connections held by a process with 10,000 waiters (standalone: 1 command + 1 subscriber). */
  waiterConnections: 2,
  /** HTTP req/s ≥ this × the plain route's, per URL pattern and middleware mode. */
  http: {
    distinct: { 'flight-distributed': 0.8, 'flight-local': 0.95 },
    same: { 'flight-distributed': 1, 'flight-local': 1 },
  },
  /**
   * HTTP, distinct URLs: req/s ≥ this × the `redis-cache` route's (a GET, and a SET on a miss, per request):
   * the unshared path of the distributed middleware against the plain cache it is held to.
   */
  httpVsRedisCache: 1,
} as const;

/** The scenarios whose rows compare with the best peer of the same scenario: distinct keys, on the run's Redis and on Valkey. */
export const DISTINCT_KEY_SCENARIOS = ['distinct-keys', 'distinct-keys-valkey'] as const;

/** The bare hop between two connections of the harness process (context: its receiver is awake already). */
export const HOP_CONTENDER = 'raw PUBLISH→SUBSCRIBE hop';
/** The same hop received by another process, as a follower's wake-up is: the wake-up target's reference. */
export const HOP_ACROSS_CONTENDER = 'raw PUBLISH→SUBSCRIBE hop, another process';

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const ratio = (a: unknown, b: unknown): number | null => {
  const x = num(a);
  const y = num(b);
  return x === null || y === null || y === 0 ? null : Math.round((x / y) * 1000) / 1000;
};

export const fmt = (v: unknown): string => {
  if (v === null || v === undefined) return '–';
  if (typeof v === 'number')
    return Number.isInteger(v) ? v.toLocaleString('en-US') : v.toLocaleString('en-US', { maximumFractionDigits: 2 });
  if (Array.isArray(v)) return v.map(fmt).join('/');
  if (typeof v === 'object')
    return Object.entries(v as Record<string, unknown>)
      .map(([k, x]) => `${k} ${fmt(x)}`)
      .join(', ');
  return String(v);
};

/** The measured row of a contender in a scenario (a `failed` row has no figures). */
const pick = (rows: readonly ResultRow[], scenario: string, contender: string, extra: (r: ResultRow) => boolean = () => true) =>
  rows.find((r) => r.scenario === scenario && r.contender === contender && r.kind !== 'failed' && extra(r));

/**
 * Adds to each row the figures its targets compare, all from the same run: distinct keys
 * (`bestPeer`, `bestPeerOpsPerSec`, `vsBestPeer`, `redisCpuVsCacheManager`, `clientCpuVsCacheManager`, and `pctOfNaive` on the
 * `local` row), footprint (`vsBentocache`), herd (`overNaiveMs`), wake-up (`hopP50Ms`, `hopP99Ms`,
 * `vsHopP50`). Mutates and returns `rows`.
 */
export function compareRows(rows: ResultRow[]): ResultRow[] {
  for (const scenario of DISTINCT_KEY_SCENARIOS) {
    const distinct = rows.filter((r) => r.scenario === scenario);
    const peers = distinct.filter((r) => PEER_CONTENDERS.includes(r.contender as never) && num(r.opsPerSec) !== null);
    const best = peers.reduce<ResultRow | undefined>((a, b) => (!a || Number(b.opsPerSec) > Number(a.opsPerSec) ? b : a), undefined);
    const cacheManager = pick(rows, scenario, 'cache-manager');
    const naive = pick(rows, scenario, 'naive');
    for (const r of distinct) {
      if (r.contender === 'raw-evalsha' || r.kind === 'skipped') continue;
      r.bestPeer = best?.contender ?? null;
      r.bestPeerOpsPerSec = best ? Number(best.opsPerSec) : null;
      r.vsBestPeer = ratio(r.opsPerSec, best?.opsPerSec);
      r.redisCpuVsCacheManager = ratio(r.redisCpuUsPerFlight, cacheManager?.redisCpuUsPerFlight);
      r.clientCpuVsCacheManager = ratio(r.clientCpuUsPerFlight, cacheManager?.clientCpuUsPerFlight);
      if (r.contender === 'local')
        r.pctOfNaive =
          num(ratio(r.opsPerSec, naive?.opsPerSec)) === null ? null : Math.round(ratio(r.opsPerSec, naive?.opsPerSec)! * 1000) / 10;
    }
  }
  for (const r of rows.filter((x) => x.scenario === 'footprint')) {
    const b = pick(rows, 'footprint', 'bentocache', (x) => x.resultBytes === r.resultBytes);
    r.vsBentocache = ratio(r.bytesPerFlight, b?.bytesPerFlight);
  }
  const herdNaive = pick(rows, 'herd', 'naive');
  for (const r of rows.filter((x) => x.scenario === 'herd')) {
    const a = num(r.p99Ms);
    const b = num(herdNaive?.p99Ms);
    r.overNaiveMs = a === null || b === null ? null : Math.round((a - b) * 1000) / 1000;
  }
  const hop = pick(rows, 'wakeup', HOP_ACROSS_CONTENDER);
  const inProcessHop = pick(rows, 'wakeup', HOP_CONTENDER);
  for (const r of rows.filter((x) => x.scenario === 'wakeup' && !String(x.contender).startsWith('raw '))) {
    r.hopP50Ms = num(hop?.p50Ms);
    r.hopP99Ms = num(hop?.p99Ms);
    r.vsHopP50 = ratio(r.p50Ms, hop?.p50Ms);
    r.inProcessHopP50Ms = num(inProcessHop?.p50Ms);
    r.vsInProcessHopP50 = ratio(r.p50Ms, inProcessHop?.p50Ms);
  }
  return rows;
}

/** Foreign notices of a fan-out process row: the coordinator's counter, else the harness's own observation. */
export function foreignOf(row: ResultRow): number | null {
  return num(row.foreignNotices) ?? num(row.observedForeignNotices);
}

/** Subscriber bytes of a fan-out process row: the coordinator's counter, else the harness's own observation. */
export function subscriberBytesOf(row: ResultRow): number | null {
  return num(row.subscriberBytes) ?? num(row.observedSubscriberBytes);
}

/**
 * What an uncontended call of each model wrapper does beyond the floor, and where that time went on an idle
 * node in the profile (bench/profiles/openai-overhead.md).
 */
const MODEL_WRAPPERS = [
  [
    'openai',
    '@flight/openai',
    'the canonical key of the request, the acquire in Redis before the model is called, and the answer encoded for Redis after the caller has it',
  ],
  [
    'ai-sdk',
    '@flight/ai-sdk',
    'the account digest and the canonical key of the call options, the acquire in Redis before the model is called, and the answer encoded for Redis and decoded for the caller',
  ],
] as const;

export function verdicts(rows: readonly ResultRow[], flightNames: readonly string[] = FLIGHT_CONTENDERS): Verdict[] {
  const all = compareRows(rows.map((r) => ({ ...r })));
  const out: Verdict[] = [];
  const add = (target: string, contender: string, figure: string, met: boolean | null, why?: string) =>
    out.push({ target, contender, figure, met, ...(met === false && why ? { why } : {}) });
  const le = (a: number | null, b: number | null) => (a === null || b === null ? null : a <= b);
  /** `a ≤ factor × b` on the raw figures (the rounded ratios in the rows are for reading only). */
  const within = (a: unknown, factor: number, b: unknown) => {
    const x = num(a);
    const y = num(b);
    return x === null || y === null ? null : x <= factor * y;
  };

  /** The throughput and CPU targets of a distinct-keys row `d` of `scenario`, named after `label`. */
  const distinctKeys = (scenario: string, label: string, d: ResultRow) => {
    const ceiling = pick(all, scenario, 'raw-evalsha');
    const peer = pick(all, scenario, String(d.bestPeer));
    add(
      `${label}: ops/s ≥ best of cache-manager, bentocache, redlock`,
      d.contender,
      `${fmt(d.opsPerSec)}/s vs ${fmt(d.bestPeer)} ${fmt(d.bestPeerOpsPerSec)}/s (${fmt(d.vsBestPeer)}×; raw EVALSHA ceiling ${fmt(ceiling?.opsPerSec)}/s)`,
      within(d.bestPeerOpsPerSec, 1, d.opsPerSec),
      `client CPU ${fmt(d.clientCpuUsPerFlight)} µs and Redis CPU ${fmt(d.redisCpuUsPerFlight)} µs per flight, against ` +
        `${fmt(d.bestPeer)}'s ${fmt(peer?.clientCpuUsPerFlight)} µs and ${fmt(peer?.redisCpuUsPerFlight)} µs; owner commands ${fmt(d.ownerCommands)}.`,
    );
    const cacheManager = pick(all, scenario, 'cache-manager');
    const prefix = label === 'Distinct keys' ? '' : `${label}: `;
    const redisLimit = LIMITS.redisCpuVsCacheManager[scenario] ?? 1;
    add(
      `${prefix}Redis CPU per owner flight ≤ ${redisLimit}× cache-manager's`,
      d.contender,
      `${fmt(d.redisCpuUsPerFlight)} µs vs ${fmt(cacheManager?.redisCpuUsPerFlight)} µs (${fmt(d.redisCpuVsCacheManager)}×)`,
      within(d.redisCpuUsPerFlight, redisLimit, cacheManager?.redisCpuUsPerFlight),
      `the owner path sends ${fmt(d.ownerCommands)} per flight (cache-manager a GET and a SET). The fenced store of the result is a ` +
        'compare-and-set: where the server has `SET … IFEQ` two plain SETs, each carrying the ~200 B record besides the value; on ' +
        'Redis 7 a Lua script, whose GET and SET of a 1 KB value take 8–9 µs inside Redis against a plain SET’s 1.3 µs, and ' +
        'batching it or keeping the value out of Lua saves nothing measurable (bench/profiles/redis.md, Wave 12).',
    );
    add(
      `${prefix}client CPU per owner flight ≤ ${LIMITS.clientCpuVsCacheManager}× cache-manager's`,
      d.contender,
      `${fmt(d.clientCpuUsPerFlight)} µs vs ${fmt(cacheManager?.clientCpuUsPerFlight)} µs (${fmt(d.clientCpuVsCacheManager)}×)`,
      within(d.clientCpuUsPerFlight, LIMITS.clientCpuVsCacheManager, cacheManager?.clientCpuUsPerFlight),
      "on top of the two commands: the flight record encoded, the result enveloped and checked, the core's bookkeeping of the " +
        'flight (bench/profiles/core.md, bench/profiles/redis.md).',
    );
  };

  const hop = pick(all, 'wakeup', HOP_ACROSS_CONTENDER);
  const inProcessHop = pick(all, 'wakeup', HOP_CONTENDER);
  const local = pick(all, 'distinct-keys', 'local');
  if (local) {
    const naive = pick(all, 'distinct-keys', 'naive');
    const pct = num(local.pctOfNaive);
    add(
      `Local mode: ops/s ≥ ${LIMITS.localVsNaive * 100} % of naive`,
      'local',
      `${fmt(local.opsPerSec)}/s = ${fmt(pct)} % of naive ${fmt(naive?.opsPerSec)}/s`,
      within(LIMITS.localVsNaive * Number(naive?.opsPerSec), 1, num(local.opsPerSec)),
      `client CPU ${fmt(local.clientCpuUsPerFlight)} µs per call against naive's ${fmt(naive?.clientCpuUsPerFlight)} µs.`,
    );
  }

  for (const urls of ['distinct', 'same'] as const) {
    const plain = pick(all, 'http', 'plain', (r) => r.urls === urls);
    for (const [contender, factor] of Object.entries(LIMITS.http[urls])) {
      const h = pick(all, 'http', contender, (r) => r.urls === urls);
      if (!h) continue;
      // The median of the per-round ratios when the rows carry it (each round's plain measured seconds
      // before or after), else the ratio of the medians.
      const times = num(h.vsPlain) ?? ratio(h.reqPerSec, plain?.reqPerSec);
      const fast = times === null ? null : times >= factor;
      const once = urls === 'same' ? num(h.handlerRunsPerBurst) : null;
      const rounds =
        Array.isArray(h.roundReqPerSec) && h.roundReqPerSec.length > 1 ? `; rounds ${h.roundReqPerSec.map(fmt).join(' / ')}` : '';
      add(
        urls === 'distinct' ? `HTTP, distinct URLs: req/s ≥ ${factor}× plain` : 'HTTP, one URL: req/s ≥ 1× plain, 1 handler run per burst',
        contender,
        `${fmt(h.reqPerSec)} vs plain ${fmt(plain?.reqPerSec)} req/s (${fmt(times)}×${rounds})` +
          (urls === 'same' ? `, ${fmt(once)} handler runs per burst` : ''),
        fast === null ? null : urls === 'same' ? fast && once === 1 : fast,
        `server CPU ${fmt(h.serverCpuUsPerReq)} µs per request against plain's ${fmt(plain?.serverCpuUsPerReq)} µs.`,
      );
    }
  }
  const cached = pick(all, 'http', 'redis-cache', (r) => r.urls === 'distinct');
  const distributed = pick(all, 'http', 'flight-distributed', (r) => r.urls === 'distinct');
  if (cached && distributed) {
    const times = num(distributed.vsRedisCache) ?? ratio(distributed.reqPerSec, cached.reqPerSec);
    add(
      `HTTP, distinct URLs: req/s ≥ ${LIMITS.httpVsRedisCache}× a Redis response cache (a GET, and a SET on a miss, per request)`,
      'flight-distributed',
      `${fmt(distributed.reqPerSec)} vs redis-cache ${fmt(cached.reqPerSec)} req/s (${fmt(times)}×)`,
      times === null ? null : times >= LIMITS.httpVsRedisCache,
      `server CPU ${fmt(distributed.serverCpuUsPerReq)} µs per request against the cache's ${fmt(cached.serverCpuUsPerReq)} µs: ` +
        'both send two commands per request; the rest is the flight (the record, the envelope and the owner’s copy of the ' +
        'response, the fenced complete) and the garbage it leaves across the two round trips (bench/profiles/http.md, Wave 10).',
    );
  }

  for (const name of flightNames) {
    for (const f of all.filter((r) => r.kind === 'failed' && r.contender === name && r.scenario !== 'fan-out')) {
      add(`${f.scenario}: measured`, name, `failed: ${fmt(f.reason)}`, false);
    }
    const d = pick(all, 'distinct-keys', name);
    if (d) {
      distinctKeys('distinct-keys', 'Distinct keys', d);
      add(
        `Owner round trips ≤ ${LIMITS.ownerRoundTrips}`,
        name,
        `${fmt(d.roundTrips)} (${fmt(d.ownerCommands)})`,
        le(num(d.roundTrips), LIMITS.ownerRoundTrips),
        `the owner path sends ${fmt(d.ownerCommands)} per flight.`,
      );
      add(
        `Follower round trips = ${LIMITS.followerRoundTrips} (+ the subscription)`,
        name,
        `${fmt(d.followerRoundTrips)} + ${fmt(d.followerSubscriptionCommands)} (un)subscribe (${fmt(d.followerCommands)})`,
        le(num(d.followerRoundTrips), LIMITS.followerRoundTrips),
        `the follower sends ${fmt(d.followerCommands)} per flight.`,
      );
    }
    const v = pick(all, 'distinct-keys-valkey', name);
    if (v) distinctKeys('distinct-keys-valkey', `Distinct keys on ${fmt(v.server)} (\`SET … IFEQ\`)`, v);
    for (const skipped of all.filter((r) => r.scenario === 'distinct-keys-valkey' && r.contender === name && r.kind === 'skipped')) {
      add('Distinct keys on Valkey 8.1 (`SET … IFEQ`)', name, `not measured: ${fmt(skipped.reason)}`, null);
    }

    const f1 = pick(all, 'footprint', name, (r) => r.resultBytes === 1024);
    if (f1) {
      const b1 = pick(all, 'footprint', 'bentocache', (r) => r.resultBytes === 1024);
      add(
        `Footprint, 1 KB result: bytes per flight ≤ ${LIMITS.footprint1kVsBentocache}× bentocache's`,
        name,
        `${fmt(f1.bytesPerFlight)} B vs ${fmt(b1?.bytesPerFlight)} B (${fmt(f1.vsBentocache)}×)`,
        within(f1.bytesPerFlight, LIMITS.footprint1kVsBentocache, b1?.bytesPerFlight),
        `MEMORY USAGE per flight by type: ${fmt(f1.memoryUsageByType)}; ${fmt(f1.keysPerFlight)} keys per flight.`,
      );
    }
    const f100 = pick(all, 'footprint', name, (r) => r.resultBytes === 100 * 1024);
    if (f100) {
      const b100 = num(pick(all, 'footprint', 'bentocache', (r) => r.resultBytes === 100 * 1024)?.bytesPerFlight);
      add(
        "Footprint, 100 KB result: bytes per flight < bentocache's",
        name,
        `${fmt(f100.bytesPerFlight)} B vs ${fmt(b100)} B (${fmt(f100.vsBentocache)}×)`,
        num(f100.bytesPerFlight) === null || b100 === null ? null : Number(f100.bytesPerFlight) < b100,
        `MEMORY USAGE per flight by type: ${fmt(f100.memoryUsageByType)}.`,
      );
    }
    const fp = all.filter((r) => r.scenario === 'footprint' && r.contender === name);
    if (fp.length) {
      const worst = fp.reduce((a, b) => (Number(b.leftoverKeys) > Number(a.leftoverKeys) ? b : a));
      add(
        'Keys left after the result TTL = 0',
        name,
        fmt(worst.leftoverKeys),
        num(worst.leftoverKeys) === null ? null : worst.leftoverKeys === 0,
        `e.g. ${fmt(worst.leftoverSamples)}.`,
      );
    }

    const herd = pick(all, 'herd', name);
    if (herd) {
      const perRound = (herd.upstreamCallsPerRound as number[] | undefined) ?? [];
      add(
        'Herd: exactly 1 upstream call',
        name,
        `${fmt(perRound)} per round`,
        perRound.length > 0 && perRound.every((n) => n === 1),
        `more than one node ran the upstream in some round (roles ${fmt(herd.roles)}).`,
      );
      const naive = pick(all, 'herd', 'naive');
      add(
        `Herd: p99 ≤ naive p99 + ${LIMITS.herdOverNaiveMs} ms`,
        name,
        `p99 ${fmt(herd.p99Ms)} ms vs naive ${fmt(naive?.p99Ms)} ms (${Number(herd.overNaiveMs) >= 0 ? '+' : ''}${fmt(herd.overNaiveMs)} ms)`,
        num(herd.p99Ms) === null || num(naive?.p99Ms) === null ? null : Number(herd.p99Ms) - Number(naive!.p99Ms) <= LIMITS.herdOverNaiveMs,
        `p50 ${fmt(herd.p50Ms)} ms, max ${fmt(herd.maxMs)} ms; 3 worker processes and redis-server share the machine's cores.`,
      );
    }

    const st = pick(all, 'stream', name);
    if (st) {
      const perRound = (st.upstreamCallsPerRound as number[] | undefined) ?? [];
      add(
        'Stream: exactly 1 upstream call, every caller gets the whole sequence',
        name,
        `${fmt(perRound)} per round, ${fmt(st.incompleteSequences)} incomplete sequences`,
        perRound.length > 0 && perRound.every((n) => n === 1) && st.incompleteSequences === 0,
        `roles ${fmt(st.roles)}, errors ${fmt(st.errorSamples)}.`,
      );
      const behind = (what: string, p50: unknown, p99: unknown) =>
        add(
          `Stream: ${what} p99 ≤ ${LIMITS.streamBehindOwnerMs} ms behind the owner`,
          name,
          `p99 ${fmt(p99)} ms (p50 ${fmt(p50)} ms)`,
          le(num(p99), LIMITS.streamBehindOwnerMs),
          `followers in other processes than the owner (chunks through Redis): first chunk p99 ${fmt(st.remoteFirstChunkVsOwnerP99Ms)} ms, ` +
            `per-chunk lag p50 ${fmt(st.remoteChunkLagP50Ms)} / p99 ${fmt(st.remoteChunkLagP99Ms)} ms; owner first chunk ${fmt(st.ownerFirstChunkMs)} ms; ` +
            "3 worker processes × 100 callers and redis-server share the machine's cores.",
        );
      behind('follower first chunk', st.followerFirstChunkVsOwnerP50Ms, st.followerFirstChunkVsOwnerP99Ms);
      behind('per-chunk lag', st.chunkLagP50Ms, st.chunkLagP99Ms);
    }

    const resume = pick(all, 'stream-resume', name);
    if (resume) {
      const cost = (resume.commandsPerChunk ?? {}) as Record<string, { commandsPerChunk: number }>;
      const per = (round: string) => cost[round]?.commandsPerChunk ?? NaN;
      const flat = (p: string) => Math.abs(per(`${p}×100f`) - per(`${p}×10f`)) <= 0.5;
      // 3p×1f has one following process, 3p×10f two: a further following node may add at most one command per chunk.
      const flatInNodes = per('3p×10f') - per('3p×1f') <= 1;
      add(
        'Stream resume: every resumed caller gets exactly the chunks after its position; Redis commands per chunk grow neither from 10 to 100 followers nor with a further following process',
        name,
        `${fmt(resume.resumes)} resumes, ${fmt(resume.incompleteSequences)} incomplete; commands/chunk 1 process ${fmt(per('1p×10f'))} → ${fmt(per('1p×100f'))}, 3 processes ${fmt(per('3p×1f'))} (1 following) → ${fmt(per('3p×10f'))} → ${fmt(per('3p×100f'))}`,
        resume.incompleteSequences === 0 && flat('1p') && flat('3p') && flatInNodes,
        `resume first chunk p99 ${fmt(resume.resumeDuringRunP99Ms)} ms during the run, ${fmt(resume.resumeAfterRunP99Ms)} ms after it. Commands include those our Lua scripts run inside Redis; with a process following, each append also publishes its notice (which carries small appends' entries, so following processes read nothing per chunk).`,
      );
    }

    for (const [scenario, wrapper, work] of MODEL_WRAPPERS) {
      const model = pick(all, scenario, name);
      if (!model) continue;
      const perRound = (model.upstreamCallsPerRound as number[] | undefined) ?? [];
      add(
        `Model calls (${wrapper}): 1 upstream call per herd of 300; an uncontended call ≤ the floor (the bare call after one Redis round trip) + ${LIMITS.modelOverFloorMs} ms`,
        name,
        `upstream ${perRound.join('/')} per round; over the floor p50 ${fmt(model.overFloorP50Ms)} ms (over the bare call ${fmt(model.overheadP50Ms)} ms)`,
        perRound.length > 0 && perRound.every((n) => n === 1) ? le(num(model.overFloorP50Ms), LIMITS.modelOverFloorMs) : false,
        `an uncontended call is a flight of its own: ${work}; uncontended call p50 ${fmt(model.uncontendedP50Ms)} ms; herd callers p99 ${fmt(model.p99Ms)} ms. ` +
          'On an idle node the profile puts ~0.2 ms before the acquire (the key, the span and `execute`, run cold), ~0.15 ms in the ' +
          'acquire over the floor’s bare SET and ~0.1 ms after the answer (bench/profiles/openai-overhead.md).',
      );
    }

    const expiry = pick(all, 'expiry', name);
    if (expiry) {
      const perRound = (expiry.upstreamCallsPerRound as number[] | undefined) ?? [];
      add(
        `Expiry under load: 1 upstream call per burst of 4,000 callers on an expired key; callers p99 ≤ a fresh replay's p99 + ${LIMITS.expiryOverFreshMs} ms`,
        name,
        `upstream ${perRound.join('/')} per round; p99 ${fmt(expiry.p99Ms)} ms vs fresh replay ${fmt(expiry.freshP99Ms)} ms (${fmt(expiry.overFreshP99Ms)} ms)`,
        perRound.length > 0 && perRound.every((n) => n === 1) && expiry.errors === 0 && expiry.freshUpstreamCalls === 0
          ? le(num(expiry.overFreshP99Ms), LIMITS.expiryOverFreshMs)
          : false,
        `answered as ${fmt(expiry.roles)}; the fresh replay measured in the same bursts (500 callers per process on a fresh key beside the expired one's 500, launched in turn); 8 worker processes and redis-server share the machine's cores.`,
      );
    }

    const reach = pick(all, 'forget-reach', name);
    if (reach) {
      add(
        `Forget: every node's L1 copy dropped within p99 ≤ ${LIMITS.forgetReachP99Ms} ms of forget resolving, no stale read, no notice to a node without a copy`,
        name,
        `p99 ${fmt(reach.p99Ms)} ms (max ${fmt(reach.maxMs)}), ${fmt(reach.staleReads)} stale reads, ${fmt(reach.notHeard)} copies not reached, ${fmt(reach.noticesAtNodeWithoutCopy)} notices at the node without a copy`,
        reach.staleReads === 0 && reach.notHeard === 0 && reach.noticesAtNodeWithoutCopy === 0
          ? le(num(reach.p99Ms), LIMITS.forgetReachP99Ms)
          : false,
        'four nodes share the harness process and its event loop.',
      );
    }

    const wake = pick(all, 'wakeup', name);
    if (wake) {
      add(
        `Wake-up: p50 ≤ ${LIMITS.wakeupVsHop}× the bare PUBLISH→SUBSCRIBE hop to another process`,
        name,
        `p50 ${fmt(wake.p50Ms)} ms vs hop ${fmt(hop?.p50Ms)} ms (${fmt(wake.vsHopP50)}×); p99 ${fmt(wake.p99Ms)} ms vs hop ${fmt(hop?.p99Ms)} ms` +
          (inProcessHop ? `; in-process hop p50 ${fmt(inProcessHop.p50Ms)} ms (${fmt(ratio(wake.p50Ms, inProcessHop.p50Ms))}×)` : ''),
        within(wake.p50Ms, LIMITS.wakeupVsHop, hop?.p50Ms),
        `woken by ${fmt(wake.woken)}; the follower verifies and decodes the notice and resolves its callers after the hop.`,
      );
    }

    const w = pick(all, 'many-waiters', name);
    if (w) {
      add(
        `Many waiters: ≤ ${LIMITS.waiterConnections} connections per process`,
        name,
        `${fmt(w.connections)} (opened ${fmt(w.connectionsOpened)})`,
        le(num(w.connections), LIMITS.waiterConnections),
        `the waiting process held ${fmt(w.connections)} connections at the peak.`,
      );
    }

    for (const topology of ['standalone', 'cluster']) {
      const procs = all.filter((r) => r.scenario === 'fan-out' && r.contender === name && r.topology === topology && r.kind === 'process');
      if (procs.length) {
        const foreign = procs.map(foreignOf);
        const known = foreign.every((x) => x !== null);
        add(
          `Fan-out (${topology}): foreign notices per process = 0`,
          name,
          `${fmt(foreign)} (own flights ${fmt(procs.map((p) => p.ownFlights))})`,
          known ? foreign.every((x) => x === 0) : null,
          `each process received notices of flights it had no waiter on: ${fmt(procs.map((p) => num(p.noticesReceived) ?? num(p.observedNotices)))} notices in all.`,
        );
        const perFlight = procs.map((p) => {
          const bytes = subscriberBytesOf(p);
          return bytes === null || !num(p.ownFlights) ? null : bytes / Number(p.ownFlights);
        });
        const ok = perFlight.every((x) => x !== null && x > 0);
        const spread = ok ? Math.max(...(perFlight as number[])) / Math.min(...(perFlight as number[])) : null;
        add(
          `Fan-out (${topology}): subscriber bytes ∝ own flights (spread of bytes per own flight ≤ ${LIMITS.fanoutBytesSpread}×)`,
          name,
          `${fmt(perFlight.map((x) => (x === null ? null : Math.round(x))))} B per own flight (spread ${fmt(spread === null ? null : Math.round(spread * 100) / 100)}×)`,
          spread === null ? null : spread <= LIMITS.fanoutBytesSpread,
          `subscriber bytes ${fmt(procs.map(subscriberBytesOf))} for own flights ${fmt(procs.map((p) => p.ownFlights))}.`,
        );
      }
      const masters = all.filter((r) => r.scenario === 'fan-out' && r.contender === name && r.topology === topology && r.kind === 'master');
      if (masters.length) {
        const wrongShard = masters.reduce((s, m) => s + (num(m.busPublishReceived) ?? 0) + (num(m.shardChannelsOfOtherSlots) ?? 0), 0);
        // Every flight's notice published on its own master (more than one per flight is allowed).
        const mismatch = masters.filter((m) => (num(m.noticesPublished) ?? 0) < (num(m.flightsOwned) ?? 0)).length;
        add(
          'Fan-out (cluster): each notice only on the master owning its slot',
          name,
          masters
            .map(
              (m) =>
                `:${m.port} ${fmt(m.noticesPublished)}/${fmt(m.flightsOwned)} published/owned, bus-received ${fmt(m.busPublishReceived)}`,
            )
            .join('; '),
          wrongShard === 0 && mismatch === 0,
          'notices reached masters that do not own their slot (cluster-bus publish messages, or channels subscribed on a master that does not own their slot).',
        );
      }
    }
    for (const skipped of all.filter(
      (r) => r.scenario === 'fan-out' && r.contender === name && (r.kind === 'skipped' || r.kind === 'failed'),
    )) {
      add(
        `Fan-out (${fmt(skipped.topology)})`,
        name,
        `${skipped.kind === 'failed' ? 'failed' : 'not measured'}: ${fmt(skipped.reason)}`,
        skipped.kind === 'failed' ? false : null,
      );
    }
  }

  const drop = all.filter((r) => r.scenario === 'resumable-stream' && r.contender === '@flight/resumable-stream');
  if (drop.length > 0) {
    const fewest = drop.reduce((a, b) => ((a.listeners as number) <= (b.listeners as number) ? a : b));
    const most = drop.reduce((a, b) => ((a.listeners as number) >= (b.listeners as number) ? a : b));
    const upstream = all.find((r) => r.scenario === 'resumable-stream' && r.contender !== most.contender && r.listeners === most.listeners);
    add(
      `resumable-stream drop-in: Redis commands per part with ${fmt(most.listeners)} listeners ≤ with ${fmt(fewest.listeners)} + ${LIMITS.streamPartCommandsGrowth}`,
      String(most.contender),
      `${fmt(most.commandsPerPart)} vs ${fmt(fewest.commandsPerPart)} per part (resumable-stream 2.2: ${fmt(upstream?.commandsPerPart)})`,
      le(num(most.commandsPerPart), (num(fewest.commandsPerPart) ?? 0) + LIMITS.streamPartCommandsGrowth),
      'a following server reads a stream once for all its readers; more commands per part with more listeners means each listener is served apart.',
    );
  }
  return out;
}

export function verdictLabel(met: boolean | null): 'PASS' | 'MISS' | 'n/a' {
  return met === null ? 'n/a' : met ? 'PASS' : 'MISS';
}
