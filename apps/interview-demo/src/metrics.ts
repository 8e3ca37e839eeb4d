/**
 * Prometheus metrics of one node (`GET /metrics`), fed from the SingleFlight lifecycle events and
 * from the invoker (model calls). All names start with `flight_`.
 */
import type { SingleFlight } from '@flight/core';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface DemoMetrics {
  registry: Registry;
  modelCall(stage: string, outcome: 'ok' | 'error'): void;
  setMode(mode: 'distributed' | 'local' | 'local-fallback'): void;
}

export function createMetrics(flight: SingleFlight, labels: { nodeId: string }): DemoMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ node: labels.nodeId });
  collectDefaultMetrics({ register: registry, prefix: 'flight_demo_process_' });

  const requests = new Counter({
    name: 'flight_requests_total',
    help: 'Calls answered by single-flight, by stage and by how the value was obtained (owner, follower, replay, l1, local; none = failed before a role)',
    labelNames: ['stage', 'role'],
    registers: [registry],
  });
  const modelCalls = new Counter({
    name: 'flight_model_calls_total',
    help: 'Upstream model calls made by this node (every attempt, retries included)',
    labelNames: ['stage', 'outcome'],
    registers: [registry],
  });
  const takeovers = new Counter({
    name: 'flight_takeovers_total',
    help: 'Flights this node took over from a dead, stuck or failed owner',
    labelNames: ['stage'],
    registers: [registry],
  });
  const fenced = new Counter({
    name: 'flight_fenced_writes_total',
    help: 'Owner writes refused because a newer epoch holds the flight',
    labelNames: ['stage', 'operation'],
    registers: [registry],
  });
  const fallbacks = new Counter({
    name: 'flight_fallbacks_total',
    help: 'Calls served by the in-process single-flight because coordination (Redis) failed (hybrid mode)',
    labelNames: ['stage'],
    registers: [registry],
  });
  const failures = new Counter({
    name: 'flight_failures_total',
    help: 'Failed calls by failure type',
    labelNames: ['stage', 'type'],
    registers: [registry],
  });
  const leaseLost = new Counter({
    name: 'flight_lease_lost_total',
    help: 'Owner runs aborted because their lease was lost',
    labelNames: ['stage', 'reason'],
    registers: [registry],
  });
  const coordinationErrors = new Counter({
    name: 'flight_coordination_errors_total',
    help: 'Coordination errors that did not fall back (distributed mode, or a result that could not be shared)',
    labelNames: ['stage'],
    registers: [registry],
  });
  const waits = new Histogram({
    name: 'flight_follower_wait_seconds',
    help: 'How long followers waited for the owner, by how they were woken',
    labelNames: ['stage', 'woken'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  const durations = new Histogram({
    name: 'flight_request_duration_seconds',
    help: 'Time to answer a call, by stage and role',
    labelNames: ['stage', 'role'],
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const sharedWith = new Histogram({
    name: 'flight_cluster_followers',
    help: 'Per completed run of this node: how many callers (one per node) across the cluster had joined it, from the atomic completion',
    labelNames: ['stage'],
    buckets: [0, 1, 2, 3, 5, 10, 20, 50],
    registers: [registry],
  });
  const mode = new Gauge({
    name: 'flight_mode',
    help: 'Effective coordination mode of this node (1 for the current one)',
    labelNames: ['mode'],
    registers: [registry],
  });

  flight.on('settled', ({ stage, role, ok, errorType, errorCode, durationMs }) => {
    requests.inc({ stage, role });
    durations.observe({ stage, role }, durationMs / 1000);
    if (!ok) failures.inc({ stage, type: errorType ?? errorCode ?? 'UNKNOWN' });
  });
  flight.on('takeover', ({ stage }) => takeovers.inc({ stage }));
  flight.on('fenced', ({ stage, operation }) => fenced.inc({ stage, operation }));
  flight.on('fallback', ({ stage }) => fallbacks.inc({ stage }));
  flight.on('lease-lost', ({ stage, reason }) => leaseLost.inc({ stage, reason }));
  flight.on('coordination-error', ({ stage }) => coordinationErrors.inc({ stage }));
  flight.on('completed', ({ stage, followers }) => sharedWith.observe({ stage }, followers));
  flight.on('waited', ({ stage, waitedMs, woken }) => waits.observe({ stage, woken }, waitedMs / 1000));

  return {
    registry,
    modelCall: (stage, outcome) => modelCalls.inc({ stage, outcome }),
    setMode(current) {
      for (const m of ['distributed', 'local', 'local-fallback']) mode.set({ mode: m }, m === current ? 1 : 0);
    },
  };
}
