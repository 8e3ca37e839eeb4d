/**
 * The evaluation stage streamed the way `resumable-stream` apps stream (the AI SDK's chat templates), on
 * `@flight/resumable-stream`: `POST …/evaluation/resumable/:streamId` makes the stream (server-sent events
 * `data: {"text":…}`, then `event: done`); `GET …/evaluation/resumable/:streamId?resumeAt=N` resumes it on any
 * node after the N characters the client already has — 404 when there is no such stream, 422 once it is done,
 * as in `resumable-stream`'s README.
 */
import type { ResumableStreamContext } from '@flight/resumable-stream/generic';
import type express from 'express';
import type { Request, Response } from 'express';
import type { StreamedAnswer } from './invoker.js';

const STREAM_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** The answer's text as the SSE text a resumable stream carries. */
export function sseText(answer: StreamedAnswer): ReadableStream<string> {
  const pieces = answer.text[Symbol.asyncIterator]();
  return new ReadableStream<string>({
    async pull(sink) {
      const next = await pieces.next();
      if (next.done) {
        sink.enqueue('event: done\ndata: {}\n\n');
        return sink.close();
      }
      if ('text' in next.value) sink.enqueue(`data: ${JSON.stringify({ text: next.value.text })}\n\n`);
    },
    async cancel() {
      await pieces.return?.();
    },
  });
}

/** Writes `stream` to the response; a client that leaves stops only its own reading (the stream is made to its end). */
async function send(stream: ReadableStream<string>, req: Request, res: Response): Promise<void> {
  res.status(200).setHeader('content-type', 'text/event-stream; charset=utf-8');
  res.setHeader('cache-control', 'no-store');
  const reader = stream.getReader();
  req.on('close', () => void reader.cancel().catch(() => undefined));
  for (let next = await reader.read(); !next.done; next = await reader.read()) res.write(next.value);
  res.end();
}

export interface ResumableRoutesDeps {
  streams: ResumableStreamContext;
  /** The stream of a request's evaluation (the route's body), made once the stream id is new. */
  evaluation(sessionId: string, body: Record<string, unknown>): StreamedAnswer;
  /** The session id of a request (checked), or throws the app's bad-request error. */
  sessionOf(req: Request): string;
}

export function mountResumableRoutes(app: express.Express, deps: ResumableRoutesDeps): void {
  const idOf = (req: Request, sessionId: string) => {
    const streamId = String(req.params.streamId);
    return STREAM_ID.test(streamId) ? `${sessionId}.${streamId}` : undefined;
  };
  app.post('/api/sessions/:sessionId/evaluation/resumable/:streamId', async (req, res, next) => {
    try {
      const sessionId = deps.sessionOf(req);
      const id = idOf(req, sessionId);
      if (!id) return void res.status(400).json({ error: 'streamId must be 1-64 of A-Z a-z 0-9 . _ -' });
      const body = (req.body ?? {}) as Record<string, unknown>;
      const stream = await deps.streams.createNewResumableStream(id, () => sseText(deps.evaluation(sessionId, body)));
      if (!stream) return void res.status(422).json({ error: 'the stream is already done' });
      await send(stream, req, res);
    } catch (error) {
      next(error);
    }
  });
  app.get('/api/sessions/:sessionId/evaluation/resumable/:streamId', async (req, res, next) => {
    try {
      const id = idOf(req, deps.sessionOf(req));
      const resumeAt = req.query.resumeAt === undefined ? 0 : Number(req.query.resumeAt);
      if (!id || !Number.isInteger(resumeAt) || resumeAt < 0)
        return void res.status(400).json({ error: 'a stream id and a whole resumeAt ≥ 0, please' });
      const stream = await deps.streams.resumeExistingStream(id, resumeAt);
      if (stream === undefined) return void res.status(404).json({ error: 'no such stream' });
      if (stream === null) return void res.status(422).json({ error: 'the stream is already done' });
      await send(stream, req, res);
    } catch (error) {
      next(error);
    }
  });
}
