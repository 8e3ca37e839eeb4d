/**
 * One demo node: configuration from the environment, coordination (Redis or memory), single-flight
 * with the stage policies, the invoker, metrics, the live tracker and the HTTP server.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { FLIGHT_MODES, createSingleFlight, type FlightMode, type SingleFlight } from '@flight/core';
import { type FlightLogger } from '@flight/core/adapter';
import pino, { type Logger } from 'pino';
import { createFlightDashboard } from '@flight/dashboard';
import { createApp } from './app.js';
import { createResumableStreamContext } from '@flight/resumable-stream/generic';
import { createCoordination, type Coordination } from './coordination.js';
import { InterviewAiInvoker } from './invoker.js';
import { LiveTracker } from './live.js';
import { createMetrics, type DemoMode } from './metrics.js';
import { createModelClients } from './model-clients.js';
import { createReportRoute } from './report-route.js';
import { REPORT_STAGE, STAGE_NAMES, stagePolicies } from './stages.js';

export interface NodeConfig {
  port: number;
  host: string;
  nodeId: string;
  /** `redis://…`; empty or `memory` for the in-memory coordinator. */
  redisUrl: string;
  redisPrefix: string;
  mode: FlightMode;
  modelBaseUrl: string;
  modelApiKey: string;
  modelName: string;
  modelTimeoutMs: number;
  heartbeatMs: number;
  logLevel: string;
  /** The other nodes' base URLs (`PEERS`, comma-separated): the dashboard's cluster panel reads them. */
  peers: string[];
}

/** Reads the node configuration from the environment (see the README for each variable). */
export function configFromEnv(env: NodeJS.ProcessEnv = process.env): NodeConfig {
  const mode = (env.FLIGHT_MODE ?? 'hybrid') as FlightMode;
  if (!FLIGHT_MODES.includes(mode)) throw new Error(`FLIGHT_MODE must be one of ${FLIGHT_MODES.join(', ')}, got ${mode}`);
  const port = Number(env.PORT ?? 3000);
  return {
    port,
    host: env.HOST ?? '127.0.0.1',
    nodeId: env.NODE_ID ?? `${hostname()}-${port}`,
    redisUrl: env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    redisPrefix: env.REDIS_PREFIX ?? 'flight:demo',
    mode,
    modelBaseUrl: env.MODEL_BASE_URL ?? 'http://127.0.0.1:8090/v1',
    modelApiKey: env.MODEL_API_KEY ?? '',
    modelName: env.MODEL_NAME ?? 'fake-model',
    modelTimeoutMs: Number(env.MODEL_TIMEOUT_MS ?? 30_000),
    heartbeatMs: Number(env.FLIGHT_HEARTBEAT_MS ?? 1000),
    logLevel: env.LOG_LEVEL ?? 'info',
    peers: (env.PEERS ?? '')
      .split(',')
      .map((peer) => peer.trim())
      .filter(Boolean),
  };
}

export interface DemoNode {
  config: NodeConfig;
  url: string;
  flight: SingleFlight;
  coordination: Coordination;
  logger: Logger;
  close(): Promise<void>;
}

/**
 * Core's log lines carry stage and key; this adds the role this node currently plays for the key.
 */
function coreLogger(logger: Logger, tracker: () => LiveTracker | undefined): FlightLogger {
  const withRole = (fields: object) => {
    const f = { ...(fields as { stage?: string; key?: string; role?: string }) };
    const t = tracker();
    if (f.stage && f.key && !f.role && t) f.role = t.roleOf(f.stage, f.key);
    return f;
  };
  return {
    debug: (fields, msg) => logger.debug(withRole(fields), msg),
    info: (fields, msg) => logger.info(withRole(fields), msg),
    warn: (fields, msg) => logger.warn(withRole(fields), msg),
    error: (fields, msg) => logger.error(withRole(fields), msg),
  };
}

export async function startNode(
  config: NodeConfig,
  logger: Logger = pino({ level: config.logLevel, base: { node: config.nodeId } }),
): Promise<DemoNode> {
  const coordination = await createCoordination({
    redisUrl: config.mode === 'local' ? 'memory' : config.redisUrl,
    prefix: config.redisPrefix,
    logger,
  });
  // The tracker needs the SingleFlight and core's logger needs the tracker: a late-bound reference.
  const late: { tracker?: LiveTracker } = {};
  const flight = createSingleFlight({
    coordinator: coordination.coordinator,
    sessionLock: coordination.sessionLock,
    mode: config.mode,
    nodeId: config.nodeId,
    stages: stagePolicies({ heartbeatIntervalMs: config.heartbeatMs, modelTimeoutMs: config.modelTimeoutMs }),
    logger: coreLogger(logger.child({ component: 'flight' }), () => late.tracker),
  });
  const tracker = (late.tracker = new LiveTracker(
    flight,
    { nodeId: config.nodeId, mode: config.mode, coordinator: coordination.reason, connected: coordination.connected },
    STAGE_NAMES,
  ));
  const metrics = createMetrics(flight);
  tracker.on('mode', (mode: string, previous: string) => {
    metrics.setMode(mode as DemoMode);
    if (mode === 'distributed') logger.info({ mode, previous }, 'coordination restored: back to distributed single-flight');
    else logger.warn({ mode, previous }, 'coordination unavailable: serving from the local single-flight');
  });
  metrics.setMode(tracker.effectiveMode());
  const models = createModelClients(
    { baseUrl: config.modelBaseUrl, apiKey: config.modelApiKey, model: config.modelName, timeoutMs: config.modelTimeoutMs },
    flight,
    (stage, outcome) => {
      logger.info({ stage, outcome }, 'called the model');
      if (stage !== REPORT_STAGE) tracker.modelCall(stage);
      metrics.modelCall(stage, outcome);
    },
  );
  const invoker = new InterviewAiInvoker({ models, logger, tracker });
  const reportRoute = await createReportRoute({
    flight,
    model: models.plain(REPORT_STAGE),
    modelName: config.modelName,
    nodeId: config.nodeId,
    logger,
  });
  // The library's dashboard, mounted at /flight (the demo's own page at / adds the burst form and streamed text).
  const dashboard = createFlightDashboard({
    singleFlight: flight,
    inspector: coordination.inspector,
    stages: [...STAGE_NAMES, REPORT_STAGE],
    peers: config.peers.map((peer) => `${peer}/flight`),
    title: 'flight · interview demo',
  });
  const app = createApp({
    invoker,
    tracker,
    metrics,
    logger,
    nodeId: config.nodeId,
    peers: config.peers,
    dashboard: dashboard.handler,
    streams: createResumableStreamContext({ waitUntil: null, coordinator: coordination.coordinator, flights: flight }),
    extend: reportRoute,
  });

  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(config.port, config.host, (error?: Error) => (error ? reject(error) : resolve(s)));
  });
  server.keepAliveTimeout = 65_000;
  const { port } = server.address() as AddressInfo;
  const url = `http://${config.host}:${port}`;
  logger.info(
    { url, mode: config.mode, coordinator: coordination.kind, reason: coordination.reason, model: config.modelBaseUrl },
    'node listening',
  );
  if (coordination.kind === 'memory' && config.mode !== 'local') {
    logger.warn({ reason: coordination.reason }, 'NOT distributed: this node deduplicates its own callers only');
  }
  return {
    config,
    url,
    flight,
    coordination,
    logger,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      dashboard.close();
      await flight.close();
      await coordination.close();
    },
  };
}
