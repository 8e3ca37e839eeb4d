/**
 * The HTTP API of one node (Express 5): the four stage routes, health, Prometheus metrics, the mounted
 * `@flight/dashboard` (`/flight/`), and the demo's own page (the burst form, streamed text) with its
 * server-sent events.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { FlightError, FlightExecutionError } from '@flight/core';
import type { DashboardHandler } from '@flight/dashboard';
import cors from 'cors';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Logger } from 'pino';
import { errorBody, statusOf } from './failures.js';
import { parsePosition, type InterviewAiInvoker, type StreamedAnswer } from './invoker.js';
import type { StreamPosition } from '@flight/core';
import type { LiveSnapshot, LiveTracker } from './live.js';
import type { DemoMetrics } from './metrics.js';
import { SseWriter } from './sse.js';
import { mountResumableRoutes } from './resumable-routes.js';
import type { ResumableStreamContext } from '@flight/resumable-stream/generic';

export interface AppDeps {
  invoker: InterviewAiInvoker;
  tracker: LiveTracker;
  metrics: DemoMetrics;
  logger: Logger;
  nodeId: string;
  /** The other nodes' base URLs, for `GET /api/cluster`. */
  peers?: string[];
  /** The `@flight/dashboard` handler, mounted at `/flight`. */
  dashboard?: DashboardHandler;
  /** Resumable streams (`@flight/resumable-stream`): the evaluation stage's `…/evaluation/resumable/:streamId` routes. */
  streams?: ResumableStreamContext;
  /** Extra routes mounted before the 404 handler (the coalescing middleware example). */
  extend?: (app: express.Express) => void;
}

const SESSION_ID = /^[A-Za-z0-9._-]{1,64}$/;
const DASHBOARD = fileURLToPath(new URL('../public/dashboard.html', import.meta.url));

class BadRequest extends Error {}

function text(body: Record<string, unknown>, field: string, max = 20_000): string {
  const value = body[field];
  if (typeof value !== 'string' || value.length === 0) throw new BadRequest(`${field} must be a non-empty string`);
  if (value.length > max) throw new BadRequest(`${field} is longer than ${max} characters`);
  return value;
}

function integer(body: Record<string, unknown>, field: string): number {
  const value = body[field];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 10_000)
    throw new BadRequest(`${field} must be an integer from 0 to 10000`);
  return value;
}

/** The evaluation stage's input, from a request body (streamed or not). */
function evaluationInput(body: Record<string, unknown>) {
  return { questionNumber: integer(body, 'questionNumber'), question: text(body, 'question'), answer: text(body, 'answer') };
}

/** The follow-up stage's input, from a request body (streamed or not). */
function followUpInput(body: Record<string, unknown>) {
  return { currentQuestion: text(body, 'currentQuestion', 2000), answer: text(body, 'answer') };
}

/**
 * The session and JSON body of a stage call, and a signal that fires when the client goes away (that
 * detaches this caller only; the flight goes on for the others).
 */
function callOf(req: Request, res: Response): { sessionId: string; body: Record<string, unknown>; signal: AbortSignal } {
  const sessionId = String(req.params.sessionId);
  const controller = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  if (!SESSION_ID.test(sessionId)) throw new BadRequest('sessionId must be 1-64 of A-Z a-z 0-9 . _ -');
  const body = (req.body ?? {}) as Record<string, unknown>;
  if (typeof body !== 'object' || Array.isArray(body)) throw new BadRequest('body must be a JSON object');
  return { sessionId, body, signal: controller.signal };
}

export function createApp(deps: AppDeps): express.Express {
  const { invoker, tracker, metrics, nodeId } = deps;
  const app = express();
  app.disable('x-powered-by');
  app.use(express.json({ limit: '256kb' }));
  // The page of one node resumes a dropped stream on another node (another origin, on loopback). Only the
  // stream routes: CORS adds `Vary: Origin`, which the coalesced report route would then refuse to share.
  app.use(
    '/api/sessions/:sessionId/:stage/stream',
    cors({ origin: /^http:\/\/(127\.0\.0\.1|localhost):\d+$/, allowedHeaders: ['content-type', 'last-event-id'] }),
  );
  app.use((_req, res, next) => {
    res.setHeader('x-flight-node', nodeId);
    next();
  });

  type Handler = (sessionId: string, body: Record<string, unknown>, signal: AbortSignal) => ReturnType<InterviewAiInvoker['evaluate']>;
  const route = (handler: Handler) => async (req: Request, res: Response, next: NextFunction) => {
    try {
      const { sessionId, body, signal } = callOf(req, res);
      const result = await handler(sessionId, body, signal);
      res.setHeader('x-flight-role', result.role);
      res.setHeader('x-flight-key', result.key);
      res.json({
        stage: result.stage,
        key: result.key,
        role: result.role,
        shared: result.shared,
        epoch: result.epoch ?? null,
        node: nodeId,
        result: result.value,
      });
    } catch (error) {
      next(error);
    }
  };
  // Streamed: server-sent events `chunk` {text} as the owner produces them, then `done` {role, …, text}.
  // A failure before the first chunk is an HTTP error like the other routes'; after it, an `error` event.
  type StreamHandler = (sessionId: string, body: Record<string, unknown>, signal: AbortSignal, after?: StreamPosition) => StreamedAnswer;
  const streamRoute = (handler: StreamHandler) => async (req: Request, res: Response, next: NextFunction) => {
    const sse = new SseWriter(res);
    try {
      const { sessionId, body, signal } = callOf(req, res);
      // A client that lost its connection comes back (to any node) with the id of the last chunk it got.
      const lastId = req.get('last-event-id');
      const after = parsePosition(lastId);
      if (lastId && !after) throw new BadRequest('Last-Event-ID is not a position of this stream');
      const answer = handler(sessionId, body, signal, after);
      res.setHeader('x-flight-key', answer.key);
      for await (const piece of answer.text) {
        if ('restart' in piece) sse.send('restart', {}, piece.id);
        else sse.send('chunk', { text: piece.text }, piece.id);
      }
      const result = await answer.result();
      sse.send('done', {
        stage: answer.stage,
        key: answer.key,
        role: result.role,
        shared: result.shared,
        epoch: result.epoch ?? null,
        node: nodeId,
        chunks: result.chunks,
        text: result.text,
      });
      res.end();
    } catch (error) {
      if (!sse.started) return next(error);
      if (res.writableEnded || res.destroyed) return;
      sse.send('error', errorBody(error));
      res.end();
    }
  };

  app.post(
    '/api/sessions/:sessionId/evaluation',
    route((sessionId, body, signal) => invoker.evaluate(sessionId, evaluationInput(body), { signal })),
  );
  app.post(
    '/api/sessions/:sessionId/follow-up',
    route((sessionId, body, signal) => invoker.followUp(sessionId, followUpInput(body), { signal })),
  );
  app.post(
    '/api/sessions/:sessionId/evaluation/stream',
    streamRoute((sessionId, body, signal, after) => invoker.evaluateStream(sessionId, evaluationInput(body), { signal, after })),
  );
  app.post(
    '/api/sessions/:sessionId/follow-up/stream',
    streamRoute((sessionId, body, signal, after) => invoker.followUpStream(sessionId, followUpInput(body), { signal, after })),
  );
  if (deps.streams)
    mountResumableRoutes(app, {
      streams: deps.streams,
      // The stream is made to its end for whoever resumes it: no caller's signal stops it.
      evaluation: (sessionId, body) => invoker.evaluateStream(sessionId, evaluationInput(body)),
      sessionOf: (req) => callOf(req, req.res!).sessionId,
    });
  app.post(
    '/api/sessions/:sessionId/extraction',
    route((sessionId, body, signal) => invoker.extract(sessionId, { fileUrl: text(body, 'fileUrl', 2000) }, { signal })),
  );
  app.post(
    '/api/sessions/:sessionId/demeanor',
    route((sessionId, body, signal) => invoker.demeanor(sessionId, { imageUrl: text(body, 'imageUrl', 2000) }, { signal })),
  );

  app.get('/healthz', (_req, res) => {
    res.json({ ok: true, node: nodeId, mode: tracker.effectiveMode() });
  });
  app.get('/metrics', (req, res) => {
    metrics.setMode(tracker.effectiveMode());
    metrics.handle(req, res);
  });
  app.get('/api/state', (_req, res) => {
    res.json(tracker.snapshot());
  });
  // Every node's summary, this one and its peers (each peer asked with a short deadline; a dead one shows
  // as unreachable): the dashboard's cluster panel.
  app.get('/api/cluster', async (_req, res) => {
    const summary = (url: string, s: LiveSnapshot) => ({
      url,
      reachable: true,
      nodeId: s.nodeId,
      effectiveMode: s.effectiveMode,
      requests: s.totals.requests,
      modelCalls: s.totals.modelCalls,
      saved: s.totals.saved,
      liveFlights: s.flights.length,
    });
    const peers = await Promise.all(
      (deps.peers ?? []).map(async (url) => {
        try {
          const response = await fetch(`${url}/api/state`, { signal: AbortSignal.timeout(500) });
          return summary(url, (await response.json()) as LiveSnapshot);
        } catch {
          return { url, reachable: false };
        }
      }),
    );
    res.json({ nodes: [summary('self', tracker.snapshot()), ...peers] });
  });
  app.get('/events', (req, res) => {
    const sse = new SseWriter(res);
    sse.open(1000);
    let dirty = true;
    const send = () => {
      if (!dirty) return;
      dirty = false;
      sse.send('state', tracker.snapshot());
    };
    const onChange = () => (dirty = true);
    tracker.on('change', onChange);
    // At most 10 frames a second, and one every 2 s anyway (ages, finished flights leaving).
    const frames = setInterval(send, 100);
    const keepalive = setInterval(() => (dirty = true), 2000);
    send();
    req.on('close', () => {
      tracker.off('change', onChange);
      clearInterval(frames);
      clearInterval(keepalive);
    });
  });
  if (deps.dashboard) app.use('/flight', deps.dashboard);
  let dashboard: string | undefined;
  app.get('/', (_req, res) => {
    dashboard ??= readFileSync(DASHBOARD, 'utf8');
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.setHeader('cache-control', 'no-store');
    res.send(dashboard);
  });

  deps.extend?.(app);

  app.use((_req, res) => {
    res.status(404).json({ error: { code: 'E_NOT_FOUND', message: 'no such route' } });
  });
  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    const e = error as any;
    if (error instanceof BadRequest || e?.type === 'entity.parse.failed' || e?.type === 'entity.too.large') {
      const status = e?.type === 'entity.too.large' ? 413 : 400;
      return res.status(status).json({ error: { code: 'E_BAD_REQUEST', message: e.message } });
    }
    const status = statusOf(error);
    if (status >= 500 && !(error instanceof FlightError)) deps.logger.error({ err: error, path: req.path }, 'unexpected error');
    if (res.headersSent) return res.end();
    if (error instanceof FlightExecutionError && error.replayed) res.setHeader('x-flight-role', 'replay');
    if (error instanceof FlightExecutionError && error.errorType === 'OVERLOAD') res.setHeader('retry-after', '1');
    res.status(status).json(errorBody(error));
  });
  return app;
}
