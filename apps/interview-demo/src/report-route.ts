/**
 * One extra route showing the `@flight/express` middleware: `GET /api/sessions/:sessionId/report`
 * (an interview summary written by the model). Identical concurrent GETs across the cluster run the
 * handler once; the others receive the same HTTP response (`x-flight-role` tells which).
 *
 * The middleware is loaded lazily: if the package cannot be loaded the route is left out and the
 * rest of the node works unchanged.
 */
import type { SingleFlight } from '@flight/core';
import type { Express, NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import type OpenAI from 'openai';
import { REPORT_STAGE } from './stages.js';

export async function createReportRoute(deps: {
  flight: SingleFlight;
  /** A client that coalesces nothing: the middleware coalesces the whole HTTP response. */
  model: OpenAI;
  modelName: string;
  nodeId: string;
  logger: Logger;
}): Promise<((app: Express) => void) | undefined> {
  let createFlightMiddleware:
    | ((options: {
        singleFlight: SingleFlight;
        stage: string;
        shareAcrossHosts?: boolean;
      }) => (req: Request, res: Response, next: NextFunction) => void)
    | undefined;
  try {
    ({ createFlightMiddleware } = (await import('@flight/express')) as any);
  } catch (error) {
    deps.logger.warn(
      { err: (error as Error).message },
      '@flight/express could not be loaded: GET /api/sessions/:sessionId/report is left out',
    );
  }
  if (typeof createFlightMiddleware !== 'function') return undefined;
  // The demo's nodes are one service reached on three ports (each its own Host): say so, as a deployment
  // whose nodes answer under several host names would. Behind one load balancer the default is right.
  const coalesce = createFlightMiddleware({ singleFlight: deps.flight, stage: REPORT_STAGE, shareAcrossHosts: true });
  return (app) => {
    app.get('/api/sessions/:sessionId/report', coalesce, async (req: Request, res: Response, next: NextFunction) => {
      const sessionId = String(req.params.sessionId);
      if (!/^[A-Za-z0-9._-]{1,64}$/.test(sessionId))
        return void res.status(400).json({ error: { code: 'E_BAD_REQUEST', message: 'bad sessionId' } });
      const log = deps.logger.child({ stage: REPORT_STAGE, key: req.originalUrl, role: 'owner' });
      try {
        log.info('writing the report: calling the model');
        const completion = await deps.model.chat.completions.create({
          model: deps.modelName,
          temperature: 0,
          messages: [
            {
              role: 'system',
              content: `You are an interview assistant. [stage:${REPORT_STAGE}] [session:${sessionId}] Summarise the interview in three sentences.`,
            },
            { role: 'user', content: `Session ${sessionId}${typeof req.query.note === 'string' ? `\n${req.query.note}` : ''}` },
          ],
        });
        const report = completion.choices[0]?.message?.content ?? '';
        res.json({ sessionId, report, producedBy: deps.nodeId, producedAt: new Date().toISOString() });
      } catch (error) {
        next(error);
      }
    });
  };
}
