/**
 * `@flight/express`: route middleware that coalesces identical concurrent requests across a cluster
 * with distributed single-flight. A thin binding of Express 4/5 over the shared HTTP handler.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import {
  createHttpFlightHandler,
  NodeExchange,
  nodeRequestView,
  type FlightKeySpec,
  type HttpFlightOptions,
  type NodeRequest,
} from '@flight/http-shared';

export * from '@flight/http-shared/public';

/**
 * Options of the Express middleware. `key` receives the Express request and response, so it can read what
 * earlier middleware put in `res.locals` (the authenticated user, a tenant).
 */
export type ExpressFlightOptions = Omit<HttpFlightOptions<Request>, 'key'> & {
  key?: ((req: Request, res: Response) => FlightKeySpec | null | undefined) | undefined;
};

/** The shared handler's options: `key` called with the request and its response (`req.res`, set by Express). */
function handlerOptions(options: ExpressFlightOptions): HttpFlightOptions<Request> {
  const { key } = options;
  if (typeof key !== 'function') return options as HttpFlightOptions<Request>;
  return { ...options, key: (req: Request) => key(req, req.res as Response) };
}

/** One Express request: the Node exchange, with `next()` as the downstream handler. */
class ExpressExchange extends NodeExchange<Request> {
  constructor(
    req: Request,
    res: Response,
    private readonly next: NextFunction,
  ) {
    super(req, sourceOf(req), res);
  }

  protected runHandler(): void {
    this.next();
  }
}

/** An Express request on `node:http` (`originalUrl`: the URL before a router stripped its mount path). */
function sourceOf(req: Request): NodeRequest {
  return { req, method: req.method, url: req.originalUrl ?? req.url, headers: req.headers };
}

/** The Express middleware, with the purge of its flights. */
export interface ExpressFlightMiddleware extends RequestHandler {
  /**
   * Forgets, cluster-wide, the flights a request to the same URL as `req` would be coalesced under (GET
   * and HEAD by default, whatever `req`'s own method, e.g. `PURGE`), with the same key, identity and
   * `vary` headers: the next such request runs the handler again. Resolves `true` when a flight was found.
   */
  purge(req: Request): Promise<boolean>;
}

/**
 * Route middleware: identical concurrent requests (same stage and key) run the downstream handler
 * once across the cluster; the others receive the same response. Mount it before the handler:
 *
 * ```ts
 * app.get('/report', createFlightMiddleware({ singleFlight, stage: 'report' }), handler);
 * ```
 * `middleware.purge(req)` drops the flight of a request to the same URL (see `ExpressFlightMiddleware`).
 * Throws `FlightValidationError` on invalid options.
 */
export function createFlightMiddleware(options: ExpressFlightOptions): ExpressFlightMiddleware {
  const handle = createHttpFlightHandler<Request>(handlerOptions(options));
  const flightMiddleware = function flightMiddleware(req: Request, res: Response, next: NextFunction): void {
    handle(new ExpressExchange(req, res, next)).catch(next);
  };
  return Object.assign(flightMiddleware, { purge: (req: Request) => handle.purge(nodeRequestView(req, sourceOf(req))) });
}
