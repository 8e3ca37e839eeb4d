/** Serves the shared middleware suite's routes with Fastify (4 or 5), coalesced through the plugin. */
import type { Http2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type fastify5 from 'fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Driver, NeutralRequest, Reply } from '@flight/http-test-kit';
import { fastifyFlight, type FastifyFlightOptions } from '../src/index.js';

export type FastifyFactory = typeof fastify5;

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
/** Server processes of the suite load the drivers from drivers.ts. */
const serverProcess = { module: here('./drivers.ts'), cwd: here('..'), tsconfig: here('./fixtures/tsconfig.json') };

function neutral(req: FastifyRequest): NeutralRequest {
  const url = req.url;
  const mark = url.indexOf('?');
  return { method: req.method, path: mark === -1 ? url : url.slice(0, mark), headers: req.headers, body: req.body };
}

/** Answers the way a Fastify handler does: returns the payload, or sends through the reply. */
function answer(reply: Reply, res: FastifyReply): unknown {
  if (reply.kind === 'throw') throw Object.assign(new Error('handler failed'), { statusCode: reply.status ?? 500 });
  void res.code(reply.status ?? 200);
  for (const [name, value] of Object.entries(reply.headers ?? {})) void res.header(name, value);
  switch (reply.kind) {
    case 'text':
      return String(reply.body);
    case 'json':
      return reply.body;
    case 'buffer':
      return reply.body as Buffer;
    case 'stream':
    case 'chunks':
      return Readable.from(reply.chunks ?? []);
    case 'empty':
      return res.send();
    case 'live':
      return Readable.from(reply.live!());
  }
}

/** A plugin-registered app where a route with `options` as its `config.flight` is declared (validation). */
function declareRoute(fastify: FastifyFactory, options: FastifyFlightOptions): void {
  const app = fastify();
  // The plugin function itself, called in place: its onRoute hook is then in effect synchronously.
  fastifyFlight(app, { singleFlight: options.singleFlight }, (error) => {
    if (error) throw error;
  });
  const { singleFlight: _, ...route } = options;
  app.get('/validate', { config: { flight: route } }, () => 'ok');
}

export function fastifyDriver(name: string, fastify: FastifyFactory): Driver {
  return {
    name,
    http2: true,
    livePiped: true,
    process: serverProcess,
    create: (options) => declareRoute(fastify, options),
    async start(setup) {
      // An HTTP/2 instance is driven through the same API (its request and reply types differ only in the raw objects).
      const app = (setup.http2 ? fastify({ http2: true }) : fastify()) as unknown as FastifyInstance;
      // Bodies reach the handler as bytes, as the other drivers' handlers see them.
      app.removeAllContentTypeParsers();
      app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
      await app.register(fastifyFlight, { singleFlight: setup.singleFlight });
      const { key, ...rest } = setup.options ?? {};
      app.addHook('onRequest', async () => setup.onArrive?.());
      const routeFlight = { ...rest, stage: setup.stage, ...(key ? { key: (req: FastifyRequest) => key(neutral(req)) } : {}) };
      app.addHook('onRequest', async (req, res) => {
        if (req.headers['x-flight-purge']) return res.send({ purged: await app.purgeFlight(req, routeFlight) });
      });
      const handle = async (req: FastifyRequest, res: FastifyReply) => answer(await setup.handler(neutral(req)), res);
      app.all('/direct/*', handle);
      app.all(
        '/r/*',
        {
          config: { flight: routeFlight },
        },
        handle,
      );
      const sessions = new Set<Http2Session>();
      if (setup.http2) {
        app.server.on('session', (session: Http2Session) => {
          sessions.add(session);
          session.once('close', () => sessions.delete(session));
        });
      }
      await app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = app.server.address() as AddressInfo;
      return {
        url: `http://127.0.0.1:${port}`,
        close: async () => {
          if (setup.http2) for (const session of sessions) session.destroy();
          else app.server.closeAllConnections();
          await app.close();
        },
      };
    },
  };
}
