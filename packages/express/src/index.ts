/**
 * `@flight/express`: route middleware that coalesces identical concurrent requests across a cluster
 * with distributed single-flight. A thin binding of Express 4/5 over the shared HTTP handler.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import {
  createHttpFlightHandler,
  disconnectSignal,
  errorHeaders,
  groupedHeaders,
  problemBody,
  PROBLEM_CONTENT_TYPE,
  readBody,
  recordResponse,
  sharedBody,
  type HttpExchange,
  type HttpFlightOptions,
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

function exchangeOf(req: Request, res: Response, next: NextFunction): HttpExchange<Request> {
  const url = req.originalUrl ?? req.url;
  const mark = url.indexOf('?');
  const method = req.method.toUpperCase();
  return {
    native: req,
    request: {
      method,
      path: mark === -1 ? url : url.slice(0, mark),
      query: mark === -1 ? '' : url.slice(mark + 1),
      headers: req.headers,
      headerLines: (name) => req.headersDistinct[name],
    },
    signal: disconnectSignal(res),
    parsedBody: () => req.body,
    async readBody(limit) {
      const body = await readBody(req, limit);
      req.body = body;
      return body;
    },
    setHeader(name, value) {
      if (!res.headersSent) res.setHeader(name, value);
    },
    record: (maxBodyBytes) => recordResponse(res, { maxBodyBytes, head: method === 'HEAD' }, () => next()),
    passthrough: () => next(),
    replay(shared) {
      res.statusCode = shared.status;
      for (const [name, value] of groupedHeaders(shared)) res.setHeader(name, value);
      if (method === 'HEAD') {
        if (shared.length !== undefined) res.setHeader('content-length', shared.length);
        res.end();
      } else {
        res.end(sharedBody(shared));
      }
    },
    reject(error) {
      if (res.headersSent) return void res.end();
      res.statusCode = error.status;
      res.setHeader('content-type', PROBLEM_CONTENT_TYPE);
      for (const [name, value] of errorHeaders(error)) res.setHeader(name, value);
      if (error.status === 413) res.setHeader('connection', 'close');
      res.end(problemBody(error));
    },
  };
}

/**
 * Route middleware: identical concurrent requests (same stage and key) run the downstream handler
 * once across the cluster; the others receive the same response. Mount it before the handler:
 *
 * ```ts
 * app.get('/report', createFlightMiddleware({ singleFlight, stage: 'report' }), handler);
 * ```
 * Throws `FlightValidationError` on invalid options.
 */
export function createFlightMiddleware(options: ExpressFlightOptions): RequestHandler {
  const handle = createHttpFlightHandler<Request>(options);
  return function flightMiddleware(req: Request, res: Response, next: NextFunction): void {
    handle(exchangeOf(req, res, next)).catch(next);
  };
}
