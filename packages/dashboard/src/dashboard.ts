/**
 * `createFlightDashboard`: collects one node's flight events and serves the dashboard's page, state and
 * live feed from a plain Node request handler (mount it in Express with `app.use`, in Fastify with the
 * `@flight/dashboard/fastify` plugin, or call it from `http.createServer`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { DashboardCollector } from './collector.js';
import { routeOf, serveRoute, type DashboardEndpoints, type DashboardRoute } from './handler.js';
import { LiveFeed } from './live-feed.js';
import { resolveDashboardOptions, type FlightDashboardOptions } from './options.js';
import { dashboardState, nodeSummary, type DashboardState, type NodeSummary } from './state.js';

/** A Node request handler that also fits Express (`app.use('/flight', dashboard.handler)`). */
export type DashboardHandler = (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void) => void;

export interface FlightDashboard {
  /** Serves the dashboard's routes; any other path goes to `next` (404 without one). */
  readonly handler: DashboardHandler;
  /** Serves one route (for framework bindings that route themselves). */
  serve(route: DashboardRoute, req: IncomingMessage, res: ServerResponse, body?: unknown): Promise<void>;
  /** What the page shows now. */
  state(): Promise<DashboardState>;
  /** This node's summary (what peers fetch). */
  node(): NodeSummary;
  /** Stops collecting and ends the open pages' feeds. */
  close(): void;
}

export function createFlightDashboard(options: FlightDashboardOptions): FlightDashboard {
  const resolved = resolveDashboardOptions(options);
  const collector = new DashboardCollector(resolved.singleFlight, resolved);
  const state = () => dashboardState(resolved, collector);
  const node = () => nodeSummary(resolved, collector);
  const feed = new LiveFeed(state, resolved.refreshMs);
  const endpoints: DashboardEndpoints = {
    readOnly: resolved.readOnly,
    singleFlight: resolved.singleFlight,
    state,
    node,
    openFeed: (res) => feed.open(res),
  };
  const serve = (route: DashboardRoute, req: IncomingMessage, res: ServerResponse, body?: unknown) =>
    serveRoute(endpoints, route, req, res, body);
  const handler: DashboardHandler = (req, res, next) => {
    const route = routeOf(req.method, req.url);
    if (!route) {
      if (next) return next();
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found');
      return;
    }
    serve(route, req, res).catch((error: unknown) => {
      if (next) return next(error);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
      res.end();
    });
  };
  return {
    handler,
    serve,
    state,
    node,
    close() {
      collector.detach();
      feed.close();
    },
  };
}
