/**
 * Prometheus metrics of one node (`GET /metrics`): the library's own (`flight_executions_total`,
 * `flight_execute_duration`, `flight_supplier_runs_total`, `flight_upstream_saved_total`,
 * `flight_takeovers_total`, `flight_fallbacks_total`, …: see the core README "Metrics"), exposed by the
 * OpenTelemetry Prometheus exporter, and the demo's own beside them (`demo_` names): model calls by
 * outcome, the node's coordination mode, how many nodes joined each of its runs.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { metrics } from '@opentelemetry/api';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import type { SingleFlight } from '@flight/core';

export type DemoMode = 'distributed' | 'local' | 'local-fallback';

export interface DemoMetrics {
  /** Answers a scrape. */
  handle(req: IncomingMessage, res: ServerResponse): void;
  modelCall(stage: string, outcome: 'ok' | 'error'): void;
  setMode(mode: DemoMode): void;
}

/**
 * Registers this process's meter provider (before the first `execute`, so the library's instruments are
 * created on it) and the demo's instruments.
 */
export function createMetrics(flight: SingleFlight): DemoMetrics {
  // Each node is its own process with its own /metrics: Prometheus tells them apart by their target.
  const exporter = new PrometheusExporter({ preventServerStart: true });
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [exporter] }));
  const meter = metrics.getMeter('interview-demo');

  const modelCalls = meter.createCounter('demo.model.calls', {
    description: 'Upstream model calls made by this node (every attempt, retries included)',
    unit: '{call}',
  });
  const sharedWith = meter.createHistogram('demo.cluster.followers', {
    description: "Per completed run of this node: how many nodes' callers had joined it, from the atomic completion",
    unit: '{node}',
    advice: { explicitBucketBoundaries: [0, 1, 2, 3, 5, 10, 20, 50] },
  });
  let current: DemoMode = 'distributed';
  meter
    .createObservableGauge('demo.mode', { description: 'Effective coordination mode of this node (1 for the current one)' })
    .addCallback((result) => {
      for (const mode of ['distributed', 'local', 'local-fallback'] as const) result.observe(mode === current ? 1 : 0, { mode });
    });
  flight.on('completed', ({ stage, followers }) => sharedWith.record(followers, { 'flight.stage': stage }));

  return {
    handle: (req, res) => exporter.getMetricsRequestHandler(req, res),
    modelCall: (stage, outcome) => modelCalls.add(1, { 'flight.stage': stage, outcome }),
    setMode(mode) {
      current = mode;
    },
  };
}
