/**
 * What one node sees of its flights, fed by its `SingleFlight` events: counters per stage (callers by
 * role, supplier runs, errors, takeovers, fallbacks), wait and run durations, the savings timeline, the
 * notable events, and the flights in progress here. Bounded whatever the traffic; `detach` unsubscribes.
 */
import type { FlightRole, SingleFlight } from '@flight/core';
import { flightId } from '@flight/core/adapter';
import { LatencyHistogram, type DurationSummary } from './histogram.js';

export type CallerRole = FlightRole | 'none';

export interface StageView {
  stage: string;
  /** Callers answered (or failed) on this node. */
  requests: number;
  /** Supplier runs on this node: the upstream calls made. */
  runs: number;
  /** Callers answered without an upstream call of their own: requests − runs, never below 0. */
  saved: number;
  byRole: Partial<Record<CallerRole, number>>;
  errors: number;
  takeovers: number;
  fallbacks: number;
  /** How long followers waited for another node's (or caller's) run. */
  wait: DurationSummary | null;
  /** How long the runs of this node's owners took, from their caller's point of view. */
  run: DurationSummary | null;
}

/** One bar of the savings chart: callers answered and upstream calls made in [start, start + bucketMs). */
export interface TimelineBucket {
  start: number;
  requests: number;
  runs: number;
}

export interface NotableEvent {
  at: number;
  type: 'takeover' | 'fallback' | 'fenced' | 'lease-lost' | 'coordination-error' | 'corrupt' | 'failure';
  stage: string;
  key: string;
  detail: string;
}

/** A flight in progress on this node. */
export interface LocalFlight {
  stage: string;
  key: string;
  role: 'owner' | 'follower' | 'local';
  epoch: number | null;
  /** The node running the supplier. */
  owner: string;
  startedAt: number;
}

const EVENTS_KEPT = 50;
const LOCAL_FLIGHTS_KEPT = 500;
const STAGES_KEPT = 200;

interface StageState {
  counters: Omit<StageView, 'stage' | 'saved' | 'wait' | 'run'>;
  wait: LatencyHistogram;
  run: LatencyHistogram;
}

export class DashboardCollector {
  readonly startedAt = Date.now();
  private readonly stageStates = new Map<string, StageState>();
  private readonly timeline: TimelineBucket[] = [];
  private readonly events: NotableEvent[] = [];
  private readonly local = new Map<string, LocalFlight>();
  private readonly unsubscribe: Array<() => void> = [];

  constructor(
    private readonly flight: SingleFlight,
    private readonly timing: { bucketMs: number; buckets: number },
  ) {
    const on = flight.on.bind(flight);
    this.unsubscribe.push(
      on('owner', ({ stage, key, epoch }) => this.begin(stage, key, { role: 'owner', epoch, owner: flight.nodeId })),
      on('follower', ({ stage, key, epoch, ownerId }) => this.begin(stage, key, { role: 'follower', epoch, owner: ownerId })),
      on('run', ({ stage, key, role }) => {
        this.stage(stage).counters.runs++;
        this.bucket().runs++;
        if (role === 'local') this.begin(stage, key, { role: 'local', epoch: null, owner: flight.nodeId });
      }),
      on('settled', (event) => this.settled(event)),
      on('takeover', ({ stage, key, epoch, previousEpoch, previousStatus }) => {
        this.stage(stage).counters.takeovers++;
        this.note({ type: 'takeover', stage, key, detail: `epoch ${previousEpoch} (${previousStatus}) taken over as ${epoch}` });
      }),
      on('fallback', ({ stage, key, error }) => {
        this.stage(stage).counters.fallbacks++;
        this.note({ type: 'fallback', stage, key, detail: `in-process single-flight: ${error}` }, true);
      }),
      on('fenced', ({ stage, key, epoch, operation }) =>
        this.note({ type: 'fenced', stage, key, detail: `${operation} of epoch ${epoch} refused: a newer epoch holds the flight` }),
      ),
      on('lease-lost', ({ stage, key, epoch, reason }) =>
        this.note({ type: 'lease-lost', stage, key, detail: `epoch ${epoch}: ${reason}` }),
      ),
      on('coordination-error', ({ stage, key, error }) => this.note({ type: 'coordination-error', stage, key, detail: error }, true)),
      on('corrupt', ({ stage, key, error, action }) => this.note({ type: 'corrupt', stage, key, detail: `${error} (${action})` })),
    );
  }

  detach(): void {
    for (const off of this.unsubscribe.splice(0)) off();
  }

  /** Stages this node has served, in the order first seen. */
  stageNames(): string[] {
    return [...this.stageStates.keys()];
  }

  stages(): StageView[] {
    return [...this.stageStates].map(([stage, { counters, wait, run }]) => ({
      stage,
      ...counters,
      byRole: { ...counters.byRole },
      saved: Math.max(0, counters.requests - counters.runs),
      wait: wait.summary(),
      run: run.summary(),
    }));
  }

  /** The savings timeline, oldest first, ending with the bar of `now` (bars without traffic included). */
  timelineUntil(now = Date.now()): TimelineBucket[] {
    const { bucketMs, buckets } = this.timing;
    const last = Math.floor(now / bucketMs) * bucketMs;
    const byStart = new Map(this.timeline.map((bucket) => [bucket.start, bucket]));
    const bars: TimelineBucket[] = [];
    for (let start = last - (buckets - 1) * bucketMs; start <= last; start += bucketMs) {
      const bucket = byStart.get(start);
      bars.push(bucket ? { ...bucket } : { start, requests: 0, runs: 0 });
    }
    return bars;
  }

  notableEvents(): NotableEvent[] {
    return [...this.events].reverse();
  }

  localFlights(): LocalFlight[] {
    return [...this.local.values()].sort((a, b) => a.startedAt - b.startedAt);
  }

  private settled(event: {
    stage: string;
    key: string;
    role: CallerRole;
    ok: boolean;
    durationMs: number;
    errorType?: string | undefined;
  }): void {
    const { counters, wait, run } = this.stage(event.stage);
    counters.requests++;
    counters.byRole[event.role] = (counters.byRole[event.role] ?? 0) + 1;
    this.bucket().requests++;
    if (event.role === 'follower') wait.record(event.durationMs);
    if (event.role === 'owner' || event.role === 'local') run.record(event.durationMs);
    if (!event.ok) {
      counters.errors++;
      this.note({ type: 'failure', stage: event.stage, key: event.key, detail: event.errorType ?? 'error' }, true);
    }
    this.local.delete(flightId(event));
  }

  private begin(stage: string, key: string, flight: Omit<LocalFlight, 'stage' | 'key' | 'startedAt'>): void {
    const id = flightId({ stage, key });
    const startedAt = this.local.get(id)?.startedAt ?? Date.now();
    this.local.delete(id);
    this.local.set(id, { stage, key, ...flight, startedAt });
    // A flight whose callers never settle here (a caller abandoned) leaves the oldest first.
    if (this.local.size > LOCAL_FLIGHTS_KEPT) this.local.delete(this.local.keys().next().value!);
  }

  private stage(name: string): StageState {
    let state = this.stageStates.get(name);
    if (!state) {
      // Stage names come from the application's code, not from requests; still, the map stays bounded.
      if (this.stageStates.size >= STAGES_KEPT) this.stageStates.delete(this.stageStates.keys().next().value!);
      state = {
        counters: { requests: 0, runs: 0, byRole: {}, errors: 0, takeovers: 0, fallbacks: 0 },
        wait: new LatencyHistogram(),
        run: new LatencyHistogram(),
      };
      this.stageStates.set(name, state);
    }
    return state;
  }

  private bucket(now = Date.now()): TimelineBucket {
    const start = Math.floor(now / this.timing.bucketMs) * this.timing.bucketMs;
    let bucket = this.timeline[this.timeline.length - 1];
    if (!bucket || bucket.start !== start) {
      bucket = { start, requests: 0, runs: 0 };
      this.timeline.push(bucket);
      if (this.timeline.length > this.timing.buckets) this.timeline.shift();
    }
    return bucket;
  }

  /** Adds an event; with `coalesce`, one of a type per stage per second (a fallback storm shows once). */
  private note(event: Omit<NotableEvent, 'at'>, coalesce = false): void {
    const now = Date.now();
    if (coalesce) {
      for (let i = this.events.length - 1; i >= 0 && now - this.events[i]!.at < 1000; i--) {
        if (this.events[i]!.type === event.type && this.events[i]!.stage === event.stage) return;
      }
    }
    this.events.push({ at: now, ...event });
    if (this.events.length > EVENTS_KEPT) this.events.shift();
  }
}
