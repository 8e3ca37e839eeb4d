/**
 * `@flight/express`: route middleware that coalesces identical concurrent requests across a cluster
 * with distributed single-flight. A thin binding of Express 4/5 over the shared HTTP handler.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import {
  createHttpFlightHandler,
  disconnectSignal,
  errorHeaders,
  nodeRequestInfo,
  eachSharedHeader,
  problemBody,
  PROBLEM_CONTENT_TYPE,
  readBody,
  recordResponse,
  sharedPayload,
  type FlightHttpError,
  type HttpExchange,
  type HttpFlightOptions,
  type HttpRequestInfo,
  type OwnerRun,
  type SharedResponse,
} from '@flight/http-shared';

export {
  FlightBodyTooLargeError,
  FlightHttpError,
  FlightHttpErrorCodes,
  FlightHttpTimeoutError,
  FlightHttpUnavailableError,
  FlightIdempotencyConflictError,
  FlightIdempotencyKeyInvalidError,
  FlightIdempotencyKeyMissingError,
  FlightIdempotencyKeyReusedError,
  FlightSharedFailureError,
  DEFAULT_CREDENTIAL_HEADERS,
  DEFAULT_REPLAY_HEADERS,
  REPRESENTATION_HEADERS,
  type FlightKeySpec,
  type HttpFlightRole,
  type IdempotencyOptions,
  type SharedResponse,
} from '@flight/http-shared';

/** Options of the Express middleware; `key` receives the Express request. */
export type ExpressFlightOptions = HttpFlightOptions<Request>;

/** One Express request as the shared handler sees it (a class: no closures per request). */
class ExpressExchange implements HttpExchange<Request> {
  readonly request: HttpRequestInfo;
  private signalOf: AbortSignal | undefined;

  constructor(
    readonly native: Request,
    private readonly res: Response,
    private readonly next: NextFunction,
  ) {
    this.request = requestInfoOf(native);
  }

  get signal(): AbortSignal {
    return (this.signalOf ??= disconnectSignal(this.res));
  }

  parsedBody(): unknown {
    return this.native.body;
  }

  async readBody(limit: number): Promise<Buffer> {
    const body = await readBody(this.native, limit);
    this.native.body = body;
    return body;
  }

  setHeader(name: string, value: string): void {
    if (!this.res.headersSent) this.res.setHeader(name, value);
  }

  record(maxBodyBytes: number): OwnerRun {
    return recordResponse(this.res, { maxBodyBytes, head: this.request.method === 'HEAD' }, () => this.next());
  }

  passthrough(): void {
    this.next();
  }

  replay(shared: SharedResponse): void {
    const { res } = this;
    res.statusCode = shared.status;
    eachSharedHeader(shared, (name, value) => res.setHeader(name, value));
    if (this.request.method === 'HEAD') {
      if (shared.length !== undefined) res.setHeader('content-length', shared.length);
      res.end();
    } else {
      res.end(sharedPayload(shared));
    }
  }

  reject(error: FlightHttpError): void {
    const { res } = this;
    if (res.headersSent) return void res.end();
    res.statusCode = error.status;
    res.setHeader('content-type', PROBLEM_CONTENT_TYPE);
    for (const [name, value] of errorHeaders(error)) res.setHeader(name, value);
    if (error.status === 413) res.setHeader('connection', 'close');
    res.end(problemBody(error));
  }
}

function requestInfoOf(req: Request): HttpRequestInfo {
  return nodeRequestInfo(req, req.method, req.originalUrl ?? req.url, req.headers);
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
  const handle = createHttpFlightHandler<Request>(options);
  const flightMiddleware = function flightMiddleware(req: Request, res: Response, next: NextFunction): void {
    handle(new ExpressExchange(req, res, next)).catch(next);
  };
  return Object.assign(flightMiddleware, { purge: (req: Request) => handle.purge({ native: req, request: requestInfoOf(req) }) });
}
