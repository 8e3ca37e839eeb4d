/** Serves the shared middleware suite's routes with Koa (2 or 3). */
import { once } from 'node:events';
import { createServer as createHttp2Server, type Http2Server, type Http2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type Koa3 from 'koa';
import type { Context } from 'koa';
import type { Driver, NeutralRequest, Reply } from '@flight/http-test-kit';
import { createFlightMiddleware } from '../src/index.js';

type KoaClass = typeof Koa3;

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
/** Server processes of the suite load the drivers from drivers.ts. */
const serverProcess = { module: here('./drivers.ts'), cwd: here('..'), tsconfig: here('./fixtures/tsconfig.json') };

function neutral(ctx: Context): NeutralRequest {
  return { method: ctx.method, path: ctx.path, headers: ctx.req.headers, body: (ctx.request as { body?: unknown }).body };
}

function answer(reply: Reply, ctx: Context): void {
  if (reply.kind === 'throw') ctx.throw(reply.status ?? 500, 'handler failed');
  ctx.status = reply.status ?? 200;
  for (const [name, value] of Object.entries(reply.headers ?? {})) ctx.set(name, value);
  switch (reply.kind) {
    case 'text':
      ctx.body = String(reply.body);
      return;
    case 'json':
      ctx.body = reply.body;
      return;
    case 'buffer':
      ctx.body = reply.body as Buffer;
      return;
    case 'stream':
    case 'chunks':
      ctx.body = Readable.from(reply.chunks ?? []);
      return;
    case 'empty':
      return;
    case 'live':
      ctx.body = Readable.from(reply.live!());
      return;
  }
}

/** Serves `server` (cleartext HTTP/2) on loopback; closing it ends every session. */
async function listenHttp2(server: Http2Server) {
  const sessions = new Set<Http2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const session of sessions) session.destroy();
        server.close(() => resolve());
      }),
  };
}

export function koaDriver(name: string, Koa: KoaClass): Driver {
  return {
    name,
    http2: true,
    livePiped: true,
    process: serverProcess,
    create: (options) => createFlightMiddleware(options),
    async start(setup) {
      const app = new Koa();
      app.silent = true;
      const { key, ...rest } = setup.options ?? {};
      const flight = createFlightMiddleware({
        ...rest,
        singleFlight: setup.singleFlight,
        stage: setup.stage,
        ...(key ? { key: (ctx: Context) => key(neutral(ctx)) } : {}),
      });
      const handle = async (ctx: Context) => answer(await setup.handler(neutral(ctx)), ctx);
      app.use(async (ctx, next) => {
        setup.onArrive?.();
        if (ctx.get('x-flight-purge')) return void (ctx.body = { purged: await flight.purge(ctx) });
        if (ctx.path.startsWith('/direct/')) return handle(ctx);
        if (ctx.path.startsWith('/r/')) return flight(ctx, () => handle(ctx));
        await next();
      });
      if (setup.http2) {
        const callback = app.callback();
        return listenHttp2(createHttp2Server((req, res) => void callback(req, res)));
      }
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
