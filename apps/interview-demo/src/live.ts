/**
 * What this node sees of its flights, for the dashboard and the logs: live flights (key, stage,
 * status, owner node, callers waiting here), recently finished ones, counters per stage, and the
 * notable events (takeovers, fallbacks, fenced writes, lost leases). Fed by the SingleFlight events
 * and by the invoker; emits 'change' (throttled by the SSE writer).
 */
import { EventEmitter } from 'node:events';
import { type FlightRole, type SingleFlight } from '@flight/core';
import { flightId } from '@flight/core/adapter';

export type LiveStatus = 'pending' | 'running' | 'following' | 'running-local' | 'succeeded' | 'failed';

export interface LiveFlight {
  id: string;
  stage: string;
  key: string;
  sessionId: string;
  status: LiveStatus;
  /** Node running the model call (this node for owner/local runs). */
  owner: string | null;
  epoch: number | null;
  /** Callers of this node currently waiting on the flight. */
  waiting: number;
  /** Callers of this node served by the flight, by role. */
  served: Partial<Record<FlightRole | 'error', number>>;
  startedAt: number;
  endedAt: number | null;
  role: FlightRole | null;
  /** For this node's completed runs: callers' nodes across the cluster that joined the run (from the atomic completion). */
  clusterFollowers: number | null;
  /** Streamed flights: the text received so far on this node (at most 2,000 characters), and its chunk count. */
  text: string | null;
  chunks: number;
}

export interface StageCounters {
  requests: number;
  modelCalls: number;
  errors: number;
  byRole: Partial<Record<FlightRole | 'none', number>>;
}

export interface NotableEvent {
  at: number;
  type: 'takeover' | 'fallback' | 'fenced' | 'lease-lost' | 'coordination-error' | 'mode' | 'failure';
  stage?: string;
  key?: string;
  detail: string;
}

export interface LiveSnapshot {
  nodeId: string;
  mode: string;
  effectiveMode: 'distributed' | 'local' | 'local-fallback';
  coordinator: string;
  startedAt: number;
  now: number;
  flights: LiveFlight[];
  finished: LiveFlight[];
  stages: Record<string, StageCounters>;
  totals: StageCounters & { saved: number; savings: number };
  events: NotableEvent[];
}

const FINISHED_KEEP_MS = 30_000;
const FINISHED_MAX = 40;
const EVENTS_MAX = 40;
const TEXT_MAX = 2000;

const idOf = (stage: string, key: string) => flightId({ stage, key });

export class LiveTracker extends EventEmitter {
  private readonly live = new Map<string, LiveFlight>();
  private readonly finished = new Map<string, LiveFlight>();
  private readonly stages: Record<string, StageCounters> = {};
  private readonly events: NotableEvent[] = [];
  private readonly startedAt = Date.now();
  private lastMode: LiveSnapshot['effectiveMode'] | undefined;

  constructor(
    private readonly flight: SingleFlight,
    private readonly info: { nodeId: string; mode: string; coordinator: string; connected: () => boolean },
    stageNames: readonly string[],
  ) {
    super();
    this.setMaxListeners(0);
    for (const stage of stageNames) this.counters(stage);
    flight.on('owner', ({ stage, key, epoch }) => this.update(stage, key, { status: 'running', owner: info.nodeId, epoch }));
    flight.on('follower', ({ stage, key, epoch, ownerId }) => this.update(stage, key, { status: 'following', owner: ownerId, epoch }));
    flight.on('completed', ({ stage, key, followers }) => this.update(stage, key, { clusterFollowers: followers }));
    flight.on('run', ({ stage, key, role }) => {
      if (role === 'local') this.update(stage, key, { status: 'running-local', owner: info.nodeId });
    });
    flight.on('takeover', ({ stage, key, epoch, previousEpoch }) =>
      this.note({ type: 'takeover', stage, key, detail: `${info.nodeId} took over epoch ${previousEpoch || '?'} → ${epoch}` }),
    );
    flight.on('fallback', ({ stage, key, error }) =>
      this.note({ type: 'fallback', stage, key, detail: `local single-flight: ${error}` }, true),
    );
    flight.on('fenced', ({ stage, key, epoch, operation }) =>
      this.note({ type: 'fenced', stage, key, detail: `${operation} of epoch ${epoch} refused` }),
    );
    flight.on('lease-lost', ({ stage, key, epoch, reason }) =>
      this.note({ type: 'lease-lost', stage, key, detail: `epoch ${epoch}: ${reason}` }),
    );
    flight.on('coordination-error', ({ stage, key, error }) => this.note({ type: 'coordination-error', stage, key, detail: error }));
    flight.on('settled', ({ stage, role, ok, errorType, key }) => {
      const c = this.counters(stage);
      c.requests++;
      c.byRole[role] = (c.byRole[role] ?? 0) + 1;
      if (!ok) {
        c.errors++;
        this.note({ type: 'failure', stage, key, detail: errorType ?? 'error' });
      }
      this.emit('change');
    });
    const modeTimer = setInterval(() => this.checkMode(), 250);
    modeTimer.unref();
  }

  /** The current role of a flight of this node (for log lines from core). */
  roleOf(stage: string, key: string): string {
    const flight = this.live.get(idOf(stage, key));
    if (!flight) return 'none';
    return flight.status === 'following'
      ? 'follower'
      : flight.status === 'running-local'
        ? 'local'
        : flight.status === 'running'
          ? 'owner'
          : 'pending';
  }

  effectiveMode(): LiveSnapshot['effectiveMode'] {
    if (this.info.mode === 'local') return 'local';
    return this.flight.degraded || !this.info.connected() ? 'local-fallback' : 'distributed';
  }

  /** A caller of this node starts waiting on (stage, key). */
  begin(stage: string, key: string, sessionId: string): void {
    const id = idOf(stage, key);
    let flight = this.live.get(id);
    if (!flight) {
      flight = {
        id,
        stage,
        key,
        sessionId,
        status: 'pending',
        owner: null,
        epoch: null,
        waiting: 0,
        served: {},
        startedAt: Date.now(),
        endedAt: null,
        role: null,
        clusterFollowers: null,
        text: null,
        chunks: 0,
      };
      this.live.set(id, flight);
      this.finished.delete(id);
    }
    flight.waiting++;
    this.emit('change');
  }

  /** A caller of this node got its answer (or error). */
  end(stage: string, key: string, role: FlightRole | 'error'): void {
    const id = idOf(stage, key);
    const flight = this.live.get(id);
    if (!flight) return;
    flight.waiting--;
    flight.served[role] = (flight.served[role] ?? 0) + 1;
    if (role !== 'error') flight.role = role;
    if (flight.waiting <= 0) {
      this.live.delete(id);
      flight.waiting = 0;
      flight.endedAt = Date.now();
      flight.status = (flight.served.error ?? 0) > 0 && flight.role === null ? 'failed' : 'succeeded';
      if (flight.owner === null && (flight.role === 'l1' || flight.role === 'replay')) flight.owner = '(stored)';
      this.finished.set(id, flight);
      this.trimFinished();
    }
    this.emit('change');
  }

  /** A caller of this node received chunk `index` of a streamed flight (the first caller to get it adds it to the text). */
  chunk(stage: string, key: string, index: number, text: string): void {
    const flight = this.live.get(idOf(stage, key));
    if (!flight || index !== flight.chunks) return;
    flight.chunks++;
    flight.text = ((flight.text ?? '') + text).slice(0, TEXT_MAX);
    this.emit('change');
  }

  /** The invoker's supplier called the model. */
  modelCall(stage: string): void {
    this.counters(stage).modelCalls++;
    this.emit('change');
  }

  snapshot(): LiveSnapshot {
    this.trimFinished();
    const totals = { requests: 0, modelCalls: 0, errors: 0, byRole: {} as StageCounters['byRole'], saved: 0, savings: 0 };
    for (const c of Object.values(this.stages)) {
      totals.requests += c.requests;
      totals.modelCalls += c.modelCalls;
      totals.errors += c.errors;
      for (const [role, n] of Object.entries(c.byRole))
        totals.byRole[role as FlightRole] = (totals.byRole[role as FlightRole] ?? 0) + (n ?? 0);
    }
    totals.saved = Math.max(0, totals.requests - totals.modelCalls);
    totals.savings = totals.requests ? totals.saved / totals.requests : 0;
    return {
      nodeId: this.info.nodeId,
      mode: this.info.mode,
      effectiveMode: this.effectiveMode(),
      coordinator: this.info.coordinator,
      startedAt: this.startedAt,
      now: Date.now(),
      flights: [...this.live.values()].sort((a, b) => a.startedAt - b.startedAt).slice(0, 100),
      finished: [...this.finished.values()].sort((a, b) => (b.endedAt ?? 0) - (a.endedAt ?? 0)),
      stages: this.stages,
      totals,
      events: [...this.events].reverse(),
    };
  }

  private counters(stage: string): StageCounters {
    return (this.stages[stage] ??= { requests: 0, modelCalls: 0, errors: 0, byRole: {} });
  }

  private update(stage: string, key: string, patch: Partial<LiveFlight>): void {
    const flight = this.live.get(idOf(stage, key));
    if (flight) Object.assign(flight, patch);
    this.emit('change');
  }

  private note(event: Omit<NotableEvent, 'at'>, coalesce = false): void {
    const last = this.events[this.events.length - 1];
    // A fallback storm (every request while Redis is down) is shown once per second per stage.
    if (coalesce && last && last.type === event.type && last.stage === event.stage && Date.now() - last.at < 1000) return;
    this.events.push({ at: Date.now(), ...event });
    if (this.events.length > EVENTS_MAX) this.events.shift();
    this.emit('change');
  }

  private checkMode(): void {
    const mode = this.effectiveMode();
    if (mode === this.lastMode) return;
    const previous = this.lastMode;
    this.lastMode = mode;
    if (previous === undefined) return;
    this.note({ type: 'mode', detail: `${previous} → ${mode}` });
    this.emit('mode', mode, previous);
  }

  private trimFinished(): void {
    const cutoff = Date.now() - FINISHED_KEEP_MS;
    for (const [id, flight] of this.finished) if ((flight.endedAt ?? 0) < cutoff) this.finished.delete(id);
    while (this.finished.size > FINISHED_MAX) {
      const oldest = this.finished.keys().next().value;
      if (oldest === undefined) break;
      this.finished.delete(oldest);
    }
  }
}
