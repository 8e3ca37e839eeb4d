/** Serves the shared middleware suite's routes with Express (4 or 5). */
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { NextFunction, Request, Response } from 'express';
import type express5 from 'express';
import type { Driver, NeutralRequest, Reply } from '@flight/http-test-kit';
import { createFlightMiddleware } from '../src/index.js';

type ExpressFactory = typeof express5;

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
/** Server processes of the suite load the drivers from drivers.ts. */
const serverProcess = { module: here('./drivers.ts'), cwd: here('..'), tsconfig: here('./fixtures/tsconfig.json') };

function neutral(req: Request): NeutralRequest {
  return { method: req.method, path: req.path, headers: req.headers, body: req.body };
}

async function answer(reply: Reply, res: Response, next: NextFunction): Promise<void> {
  if (reply.kind === 'throw') return next(Object.assign(new Error('handler failed'), { status: reply.status ?? 500 }));
  res.status(reply.status ?? 200);
  for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value);
  switch (reply.kind) {
    case 'text':
      res.send(String(reply.body));
      return;
    case 'json':
      res.json(reply.body);
      return;
    case 'buffer':
      if (!res.getHeader('content-type')) res.type('application/octet-stream');
      res.send(reply.body as Buffer);
      return;
    case 'stream':
      Readable.from(reply.chunks ?? []).pipe(res);
      return;
    case 'chunks':
      for (const chunk of reply.chunks ?? []) res.write(chunk);
      res.end();
      return;
    case 'empty':
      res.end();
      return;
    case 'live':
      try {
        for await (const piece of reply.live!()) res.write(piece);
        res.end();
      } catch (error) {
        res.destroy(error as Error); // what a streaming handler does when its source fails after the head
      }
      return;
  }
}

export function expressDriver(name: string, express: ExpressFactory): Driver {
  return {
    name,
    process: serverProcess,
    create: (options) => createFlightMiddleware(options),
    async start(setup) {
      const app = express();
      app.set('etag', false);
      const { key, ...rest } = setup.options ?? {};
      const flight = createFlightMiddleware({
        ...rest,
        singleFlight: setup.singleFlight,
        stage: setup.stage,
        ...(key ? { key: (req: Request) => key(neutral(req)) } : {}),
      });
      const handle = (req: Request, res: Response, next: NextFunction) => {
        Promise.resolve(setup.handler(neutral(req)))
          .then((reply) => answer(reply, res, next))
          .catch(next);
      };
      app.use((_req, _res, next) => {
        setup.onArrive?.();
        next();
      });
      app.use((req, res, next) => {
        if (!req.headers['x-flight-purge']) return next();
        flight.purge(req).then((purged) => res.json({ purged }), next);
      });
      app.use('/direct', handle);
      app.use('/r', flight, handle);
      const server = app.listen(0, '127.0.0.1');
      await new Promise<void>((resolve) => server.once('listening', () => resolve()));
      const { port } = server.address() as AddressInfo;
      return {
        url: `http://127.0.0.1:${port}`,
        close: () =>
          new Promise<void>((resolve) => {
            server.closeAllConnections();
            server.close(() => resolve());
          }),
      };
    },
  };
}
