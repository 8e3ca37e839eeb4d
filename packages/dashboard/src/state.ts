/**
 * What the page shows, built from the collector, the coordinator's listing and the peers' summaries. A
 * peer that does not answer within its deadline, or answers something else, is shown as unreachable; a
 * listing that fails is shown as failed: building the state never throws.
 */
import type { FlightMode } from '@flight/core';
import type { DashboardCollector, LocalFlight, NotableEvent, StageView, TimelineBucket } from './collector.js';
import type { ResolvedDashboardOptions, SharedFlightListing } from './options.js';

/** One node's summary: what its peers fetch (`GET <mount>/state?scope=node`). */
export interface NodeSummary {
  nodeId: string;
  mode: FlightMode;
  /** Hybrid mode serving from its in-process fallback: the coordinator failed on this node. */
  degraded: boolean;
  startedAt: number;
  now: number;
  requests: number;
  runs: number;
  saved: number;
  liveFlights: number;
  timeline: TimelineBucket[];
}

export type NodeStatus =
  (NodeSummary & { url: string; self: boolean; reachable: true }) | { url: string; self: false; reachable: false; error: string };

export interface DashboardState {
  title: string;
  readOnly: boolean;
  refreshMs: number;
  bucketMs: number;
  node: NodeSummary;
  cluster: {
    nodes: NodeStatus[];
    requests: number;
    runs: number;
    saved: number;
    /** saved / requests, 0 without requests. */
    savings: number;
    /** The savings timeline summed over the nodes that answered (bars are aligned to the clock). */
    timeline: TimelineBucket[];
    /** Nodes degraded or unreachable: their node name, or URL when unreachable. */
    degraded: string[];
  };
  stages: StageView[];
  flights: {
    /** This node's flights in progress. */
    local: LocalFlight[];
    /** Flights in progress across the cluster, from the coordinator; null without an inspector. */
    shared: SharedFlightListing[] | null;
    /** Why the cluster-wide listing failed (coordinator unreachable). */
    sharedError?: string;
  };
  events: NotableEvent[];
}

/** This node's summary; `stages` and `liveFlights` when the caller has them already (one build per refresh). */
export function nodeSummary(
  options: ResolvedDashboardOptions,
  collector: DashboardCollector,
  stages = collector.stages(),
  liveFlights = collector.localFlights().length,
): NodeSummary {
  const { singleFlight } = options;
  let requests = 0;
  let runs = 0;
  for (const stage of stages) {
    requests += stage.requests;
    runs += stage.runs;
  }
  return {
    nodeId: singleFlight.nodeId,
    mode: singleFlight.mode,
    degraded: singleFlight.degraded,
    startedAt: collector.startedAt,
    now: Date.now(),
    requests,
    runs,
    saved: Math.max(0, requests - runs),
    liveFlights,
    timeline: collector.timelineUntil(),
  };
}

const isSummary = (value: any): value is NodeSummary =>
  typeof value?.nodeId === 'string' &&
  typeof value.requests === 'number' &&
  typeof value.runs === 'number' &&
  typeof value.degraded === 'boolean' &&
  Array.isArray(value.timeline);

async function askPeer(url: string, options: ResolvedDashboardOptions): Promise<NodeStatus> {
  const timeoutMs = options.peerTimeoutMs;
  try {
    const headers = { ...(await options.peerHeaders(url)), accept: 'application/json' };
    const response = await options.peerFetch(`${url}/state?scope=node`, { signal: AbortSignal.timeout(timeoutMs), headers });
    if (!response.ok) return { url, self: false, reachable: false, error: `HTTP ${response.status}` };
    const summary: unknown = await response.json();
    if (!isSummary(summary)) return { url, self: false, reachable: false, error: 'not a flight dashboard' };
    return { ...summary, url, self: false, reachable: true };
  } catch (error) {
    const failure = error as Error & { cause?: { code?: string } };
    const reason =
      failure?.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : (failure?.cause?.code ?? String(failure?.message ?? error));
    return { url, self: false, reachable: false, error: reason };
  }
}

async function listShared(options: ResolvedDashboardOptions, stages: string[]): Promise<SharedFlightListing[] | string | null> {
  const { inspector, listLimit, peerTimeoutMs } = options;
  if (!inspector) return null;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the coordinator did not answer within ${2 * peerTimeoutMs} ms`)), 2 * peerTimeoutMs);
  });
  try {
    const lists = await Promise.race([Promise.all(stages.map((stage) => inspector.listFlights({ stage, limit: listLimit }))), deadline]);
    return lists.flat().sort((a, b) => b.ageMs - a.ageMs);
  } catch (error) {
    return String((error as Error)?.message ?? error);
  } finally {
    clearTimeout(timer);
  }
}

function sumTimelines(timelines: TimelineBucket[][]): TimelineBucket[] {
  const byStart = new Map<number, TimelineBucket>();
  for (const timeline of timelines)
    for (const { start, requests, runs } of timeline) {
      const bar = byStart.get(start) ?? { start, requests: 0, runs: 0 };
      bar.requests += requests;
      bar.runs += runs;
      byStart.set(start, bar);
    }
  const own = timelines[0] ?? [];
  // The chart keeps this node's window: bars of a peer whose clock is far off are left out.
  return own.map(({ start }) => byStart.get(start)!);
}

export async function dashboardState(options: ResolvedDashboardOptions, collector: DashboardCollector): Promise<DashboardState> {
  const stageSummaries = collector.stages();
  const local = collector.localFlights();
  const node = nodeSummary(options, collector, stageSummaries, local.length);
  const stages = [...new Set([...options.stages, ...collector.stageNames()])];
  const [peers, shared] = await Promise.all([Promise.all(options.peers.map((url) => askPeer(url, options))), listShared(options, stages)]);
  const nodes: NodeStatus[] = [{ ...node, url: '', self: true, reachable: true }, ...peers];
  const answered = nodes.filter((n): n is Extract<NodeStatus, { reachable: true }> => n.reachable);
  const requests = answered.reduce((sum, n) => sum + n.requests, 0);
  const runs = answered.reduce((sum, n) => sum + n.runs, 0);
  const saved = Math.max(0, requests - runs);
  const flights: DashboardState['flights'] = { local, shared: null };
  if (typeof shared === 'string') flights.sharedError = shared;
  else flights.shared = shared;
  return {
    title: options.title,
    readOnly: options.readOnly,
    refreshMs: options.refreshMs,
    bucketMs: options.bucketMs,
    node,
    cluster: {
      nodes,
      requests,
      runs,
      saved,
      savings: requests ? saved / requests : 0,
      timeline: sumTimelines(answered.map((n) => n.timeline)),
      degraded: nodes.flatMap((n) => (!n.reachable ? [n.url] : n.degraded ? [n.nodeId] : [])),
    },
    stages: stageSummaries,
    flights,
    events: collector.notableEvents(),
  };
}
