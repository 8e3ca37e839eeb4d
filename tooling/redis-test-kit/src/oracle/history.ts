/**
 * What a randomized cross-feature run did, as recorded from outside the library (every call, run, forget
 * and outage with when it started and ended), and the rules a correct history keeps. The checks read the
 * history only: they know nothing of how the library keeps its copies.
 */

export type NodeMode = 'distributed' | 'hybrid' | 'local';

/** A span of time on the run's clock (`performance.now()`, ms). */
export interface Span {
  start: number;
  end: number;
}

export interface RunRecord extends Span {
  id: number;
  node: string;
  stage: string;
  key: string;
  /** The supplier context's role: `local` runs hold no lease. */
  role: 'owner' | 'local';
  takeover: boolean;
  /** The run's epoch (owner runs; undefined for a run without a lease). */
  epoch: number | undefined;
  /** The step whose supplier ran it (`call <index>` or `stream <index>`), for reports. */
  step: string;
  failed: boolean;
}

export interface CallRecord extends Span {
  node: string;
  stage: string;
  key: string;
  options: { fresh?: boolean; staleRefresh?: 'caller'; resultTtlMs?: number };
  /** Undefined until the call settles. */
  outcome?: { ok: true; run: number; valueKey: string; role: string; ageMs: number | undefined } | { ok: false; error: string };
}

export interface ForgetRecord extends Span {
  node: string;
  stage: string;
  key: string;
  ok: boolean;
}

/**
 * A streamed call read in two parts: `first` (up to a point where the client left), then `resumed` from
 * that position on `resumeNode` (`after`). Chunks are `<stage/key>|<run>|<index>`; `restart` marks a
 * `FlightStreamRestart`.
 */
export interface StreamRecord extends Span {
  node: string;
  resumeNode: string;
  stage: string;
  key: string;
  first: string[];
  resumed: string[];
  /** Undefined until both parts ended. */
  outcome?: { ok: true } | { ok: false; error: string };
}

export interface History {
  nodes: Record<string, NodeMode>;
  runs: Map<number, RunRecord>;
  calls: CallRecord[];
  streams: StreamRecord[];
  forgets: ForgetRecord[];
  /** Outages per hybrid node: its connection to Redis reset and refused. */
  outages: Record<string, Span[]>;
  /** Spans in which the process (every node of the run) ran no timer: a busy machine, a long GC. */
  stalls: Span[];
  /** The lifecycle events the nodes emitted, for reports only (the rules read none of them). */
  events: EventRecord[];
}

/** A lifecycle event a node emitted (`SingleFlight.on`), when, and what else it carried. */
export interface EventRecord {
  node: string;
  at: number;
  name: string;
  stage: string;
  key: string;
  detail: string;
}

/** What the stages promise (the windows the checks hold values to). */
export interface Windows {
  /** The stage's `resultTtlMs`. */
  resultTtlMs: number;
  /** The longest stale window (0 for a stage without). */
  staleMs: number;
}

/** How much later than a forget resolved another node may still act on what it held. */
export interface Allowances {
  /** A forget made on another node reaches this one by a notice on its way. */
  noticeMs: number;
  /** A caller on the owner node may join a run forgotten on another node until the owner's next heartbeat. */
  heartbeatMs: number;
  /** Clock slack between an owner's completion and what a reader computes from it. */
  slackMs: number;
  /**
   * A stall of the process this long (the stages' `takeoverAfterMs`) may cost a running owner its lease: it
   * renewed nothing meanwhile (at-least-once under owner loss, documented).
   */
  stallMs: number;
  /** How long after an outage ended its node's client may take to connect again and send what it queued. */
  reconnectMs: number;
}

export interface Violation {
  rule: string;
  detail: string;
}

const overlaps = (a: Span, b: Span) => a.start < b.end && b.start < a.end;
const ref = (r: { stage: string; key: string }) => `${r.stage}/${r.key}`;

/** Every rule, over the whole history. */
export function checkHistory(history: History, windows: Record<string, Windows>, allow: Allowances): Violation[] {
  return [
    ...valuesOfTheirOwnKey(history),
    ...nothingFromBeforeAForget(history, allow),
    ...agesWithinWindows(history, windows, allow),
    ...freshIsNeverStale(history),
    ...oneRunAtATime(history, allow),
    ...everyCallSettled(history),
    ...streamsNeverSplice(history),
  ];
}

/**
 * What a streamed caller reads, across a resume on any node, is one run's chunks in order from where it
 * stands: after a restart marker, a run from its first chunk; never two runs' chunks spliced, never a chunk
 * of another key, never a gap or a repeat. Every streamed call settles.
 */
function streamsNeverSplice(history: History): Violation[] {
  const out: Violation[] = [];
  for (const stream of history.streams) {
    const where = `stream ${ref(stream)} on ${stream.node} → ${stream.resumeNode}`;
    if (!stream.outcome) {
      out.push({ rule: 'every call settles', detail: `${where}, started at ${stream.start.toFixed(0)} ms` });
      continue;
    }
    let run: string | undefined;
    let next = 0;
    for (const chunk of [...stream.first, ...stream.resumed]) {
      if (chunk === 'restart') {
        run = undefined;
        next = 0;
        continue;
      }
      const [key, chunkRun, index] = chunk.split('|');
      const problem =
        key !== ref(stream)
          ? `a chunk of ${key}`
          : run !== undefined && chunkRun !== run
            ? `run ${chunkRun}'s chunk ${index} after run ${run}'s chunk ${next - 1}, with no restart`
            : Number(index) !== next
              ? `chunk ${index} of run ${chunkRun} where ${next} was due`
              : undefined;
      if (problem) {
        out.push({
          rule: 'a stream never splices two runs',
          detail: `${where}: ${problem} (read ${[...stream.first, '|', ...stream.resumed].join(' ')})`,
        });
        break;
      }
      run = chunkRun;
      next++;
    }
  }
  return out;
}

function valuesOfTheirOwnKey(history: History): Violation[] {
  const out: Violation[] = [];
  for (const call of history.calls) {
    if (!call.outcome?.ok) continue;
    const run = history.runs.get(call.outcome.run);
    if (call.outcome.valueKey !== ref(call) || !run || ref(run) !== ref(call))
      out.push({ rule: 'a value comes from a run of its own key', detail: `${ref(call)} on ${call.node} got ${call.outcome.valueKey}` });
  }
  return out;
}

/**
 * No call that starts after a forget resolved gets a value from a run that started before the forget did.
 * A forget on a `local` node concerns that node only; another node may act on what it held for
 * `noticeMs` after the forget resolved (the notice is on its way), and a caller of the owner node may join
 * the forgotten run until the owner's next heartbeat (`heartbeatMs`, documented), each counted without the time
 * the process stood still (it heard nothing meanwhile); a hybrid node cut off from Redis while
 * the forget was made and told could not hear it (documented) — a later outage excuses nothing.
 */
function nothingFromBeforeAForget(history: History, allow: Allowances): Violation[] {
  const out: Violation[] = [];
  for (const call of history.calls) {
    if (!call.outcome?.ok) continue;
    const run = history.runs.get(call.outcome.run);
    if (!run) continue;
    for (const forget of history.forgets) {
      if (!forget.ok || ref(forget) !== ref(call) || forget.end >= call.start || run.start >= forget.start) continue;
      const elsewhere = forget.node !== call.node;
      if (elsewhere && (history.nodes[forget.node] === 'local' || history.nodes[call.node] === 'local')) continue;
      const joinedHere = call.outcome.role === 'follower' && run.node === call.node;
      // The notice, or the heartbeat, waits out any time the process stood still meanwhile.
      const stalled = elsewhere ? stalledWithin(history, { start: forget.end, end: call.start }) : 0;
      if (elsewhere && call.start - forget.end - stalled < (joinedHere ? allow.heartbeatMs : allow.noticeMs)) continue;
      // A node cut off from Redis while the forget was made and told could not hear it.
      const hearing = { start: forget.start, end: Math.min(call.start, forget.end + allow.noticeMs) };
      const cutOff = (history.outages[call.node] ?? []).some((outage) => overlaps(outage, hearing));
      if (cutOff) continue;
      out.push({
        rule: 'nothing from before a forget',
        detail: `${ref(call)} on ${call.node} (${call.outcome.role}) started ${(call.start - forget.end).toFixed(1)} ms after a forget on ${forget.node} resolved, and got run ${run.id} of ${run.node}, started before it`,
      });
    }
  }
  return out;
}

/**
 * A stale value's age is its run's age (from completion) and within the stage's windows; other copies live
 * no longer than `resultTtlMs` from their run's completion. Both are counted from the completion less the
 * time the process stood still after it (the result is stored when the owner's write runs).
 */
function agesWithinWindows(history: History, windows: Record<string, Windows>, allow: Allowances): Violation[] {
  const out: Violation[] = [];
  for (const call of history.calls) {
    const outcome = call.outcome;
    if (!outcome?.ok) continue;
    const run = history.runs.get(outcome.run);
    const stage = windows[call.stage];
    if (!run || !stage) continue;
    // Exempt (stated): a run that ended while its node was cut off from Redis may have its result stored
    // when the connection returns (a command queued by the client), and the stored copy lives from then.
    if ((history.outages[run.node] ?? []).some((outage) => overlaps(outage, { start: run.start, end: call.start }))) continue;
    // The result is stored, and its times counted, from when the owner's write ran: a stall of the process
    // after the run ended delays that write, and the copy lives that much longer from the run's end.
    const stalled = stalledWithin(history, { start: run.end, end: call.start });
    if (outcome.role === 'stale') {
      const age = outcome.ageMs ?? -1;
      const lowest = call.start - run.end - allow.slackMs - stalled;
      const highest = call.end - run.end + allow.slackMs;
      if (age < lowest || age > highest || age > stage.resultTtlMs + stage.staleMs + allow.slackMs)
        out.push({
          rule: 'a stale age is its run’s and within the windows',
          detail: `${ref(call)} on ${call.node}: ageMs ${age}, run ${run.id} of ${run.node} (${run.role}) ended ${(call.start - run.end).toFixed(0)}–${(call.end - run.end).toFixed(0)} ms before (the process stood still ${stalled.toFixed(0)} ms in between)`,
        });
    } else if (outcome.role !== 'owner' && outcome.role !== 'local' && outcome.role !== 'follower') {
      if (call.start - run.end - stalled > stage.resultTtlMs + allow.slackMs)
        out.push({
          rule: 'a copy is never older than its result’s time',
          detail: `${ref(call)} on ${call.node} (${outcome.role}) got run ${run.id} of ${run.node} (${run.role}), ended ${(call.start - run.end).toFixed(0)} ms before it started (the process stood still ${stalled.toFixed(0)} ms in between)`,
        });
    }
  }
  return out;
}

function freshIsNeverStale(history: History): Violation[] {
  return history.calls
    .filter((call) => call.options.fresh && call.outcome?.ok && call.outcome.role === 'stale')
    .map((call) => ({ rule: 'fresh: true is never stale', detail: `${ref(call)} on ${call.node}` }));
}

/**
 * While Redis is healthy, two leased runs of one key never overlap — unless a forget of the key came between
 * them (the forgotten run goes on; a forget that failed while cut off may land later: `landsBy`) or the later
 * one took the earlier over. Outages of hybrid nodes are exempt,
 * and so is a stall of the process past `allow.stallMs` while the earlier run went on (its lease could lapse).
 */
function oneRunAtATime(history: History, allow: Allowances): Violation[] {
  const out: Violation[] = [];
  const outages = Object.values(history.outages).flat();
  const byKey = new Map<string, RunRecord[]>();
  for (const run of history.runs.values()) {
    if (run.role !== 'owner' || history.nodes[run.node] === 'local') continue;
    const list = byKey.get(ref(run)) ?? [];
    list.push(run);
    byKey.set(ref(run), list);
  }
  for (const runs of byKey.values()) {
    runs.sort((a, b) => a.start - b.start);
    for (let i = 1; i < runs.length; i++) {
      const [earlier, later] = [runs[i - 1]!, runs[i]!];
      if (!overlaps(earlier, later) || later.takeover) continue;
      const between = { start: earlier.start, end: later.start };
      if (history.forgets.some((f) => ref(f) === ref(later) && f.start <= later.start && landsBy(history, f, allow) >= earlier.start))
        continue;
      if (outages.some((outage) => overlaps(outage, { start: earlier.start, end: later.end }))) continue;
      if (longestStall(history, between) >= allow.stallMs) continue;
      const sinceOutage = Math.min(...outages.filter((o) => o.end <= earlier.start).map((o) => earlier.start - o.end));
      const stalled = longestStall(history, { start: earlier.start - LEASE_LOOKBACK_MS, end: later.start });
      out.push({
        rule: 'one run per key at a time',
        detail: `${ref(later)}: ${describeRun(history, later)} started while ${describeRun(history, earlier)} ran (${(between.end - between.start).toFixed(0)} ms in; the last outage ended ${sinceOutage.toFixed(0)} ms before; the longest stall of the process from ${LEASE_LOOKBACK_MS} ms before the earlier run: ${stalled.toFixed(0)} ms); events of the key from ${LEASE_LOOKBACK_MS} ms before the earlier run: ${eventsAround(history, later, earlier.start - LEASE_LOOKBACK_MS, later.start)}`,
      });
    }
  }
  return out;
}

/**
 * Until when a forget may take effect: when it resolved; or, for one that failed while its node was cut off
 * from Redis, until `allow.reconnectMs` after that outage ended (the client queued its command and sends it
 * once the connection is back, where it forgets whatever run is current then).
 */
function landsBy(history: History, forget: ForgetRecord, allow: Allowances): number {
  if (forget.ok) return forget.end;
  const cutOff = (history.outages[forget.node] ?? []).filter((outage) => overlaps(outage, forget));
  return Math.max(forget.end, ...cutOff.map((outage) => outage.end + allow.reconnectMs));
}

/** How far before a run's start a report looks for stalls of the process (its lease was taken before it started). */
const LEASE_LOOKBACK_MS = 5000;

/** How long the process stood still within `span` (ms): the stalls' overlaps with it, summed. */
function stalledWithin(history: History, span: Span): number {
  let total = 0;
  for (const stall of history.stalls) total += Math.max(0, Math.min(stall.end, span.end) - Math.max(stall.start, span.start));
  return total;
}

/** The longest stall of the process that overlaps `span` (ms; 0 without one). */
function longestStall(history: History, span: Span): number {
  return Math.max(0, ...history.stalls.filter((stall) => overlaps(stall, span)).map((stall) => stall.end - stall.start));
}

/** The events of `of`'s key from `from` to `to`, as a report lists them (times relative to `to`; the last 20). */
function eventsAround(history: History, of: { stage: string; key: string }, from: number, to: number): string {
  const events = history.events.filter((e) => e.stage === of.stage && e.key === of.key && e.at >= from && e.at <= to + 50).slice(-20);
  return events.map((e) => `[${(e.at - to).toFixed(1)} ms ${e.node} ${e.name} ${e.detail}]`).join(' ') || 'none';
}

/** A run as a report names it: its id, node, epoch and the step (with its options) whose supplier ran it. */
function describeRun(history: History, run: RunRecord): string {
  const [kind, index] = run.step.split(' ');
  const call = kind === 'call' ? history.calls[Number(index)] : undefined;
  const answer = call?.outcome ? (call.outcome.ok ? `, answered ${call.outcome.role}` : `, failed: ${call.outcome.error}`) : '';
  const options = call ? ` ${JSON.stringify(call.options)} started ${(call.start - run.start).toFixed(1)} ms before${answer}` : '';
  return `run ${run.id} on ${run.node} (epoch ${run.epoch ?? 'none'}, ${run.step}${options})`;
}

function everyCallSettled(history: History): Violation[] {
  return history.calls
    .filter((call) => call.outcome === undefined)
    .map((call) => ({ rule: 'every call settles', detail: `${ref(call)} on ${call.node}, started at ${call.start.toFixed(0)} ms` }));
}
