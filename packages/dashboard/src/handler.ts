/**
 * The dashboard's HTTP routes, relative to where it is mounted, as one Node request handler (Express
 * passes it the mounted path; Fastify's plugin names the route):
 *   GET  /                  the page
 *   GET  /state             the whole state as JSON (`?scope=node`: this node's summary, what peers fetch)
 *   GET  /events            the state as server-sent events, once per refresh
 *   POST /forget            {"stage","key"} → forgets the flight cluster-wide; 403 when read-only (the default)
 *                           or sent from another site
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { FlightError, FlightValidationError, type SingleFlight } from '@flight/core';
import { DashboardCrossSiteError, DashboardReadOnlyError } from './errors.js';
import { renderPage } from './page.js';

export type DashboardRoute = 'page' | 'state' | 'node' | 'events' | 'forget';

export interface DashboardEndpoints {
  readOnly: boolean;
  singleFlight: SingleFlight;
  state(): Promise<unknown>;
  node(): unknown;
  openFeed(res: ServerResponse): void;
}

const BODY_LIMIT = 16 * 1024;

/** The route of a request path relative to the mount, or undefined when it is not the dashboard's. */
export function routeOf(method: string | undefined, url: string | undefined): DashboardRoute | undefined {
  const { pathname, searchParams } = new URL(url ?? '/', 'http://dashboard');
  const path = pathname.replace(/\/+$/, '') || '/';
  if (method === 'POST') return path === '/forget' ? 'forget' : undefined;
  if (method !== 'GET' && method !== 'HEAD') return undefined;
  if (path === '/' || path === '/index.html') return 'page';
  if (path === '/state') return searchParams.get('scope') === 'node' ? 'node' : 'state';
  if (path === '/events') return 'events';
  return undefined;
}

function send(res: ServerResponse, status: number, type: string, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, {
    'content-type': type,
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    ...headers,
  });
  res.end(res.req?.method === 'HEAD' ? undefined : body);
}

function problem(res: ServerResponse, status: number, error: FlightError): void {
  const body = JSON.stringify({ type: 'about:blank', title: error.message, status, code: error.code });
  send(res, status, 'application/problem+json', body);
}

/**
 * Why a write must be refused as cross-site, or undefined: a browser says where a request comes from
 * (`Sec-Fetch-Site`, else `Origin`); only this very site may write. A request without either (curl, a
 * script) is not a browser's, so no other site can have sent it.
 */
function crossSite(req: IncomingMessage): DashboardCrossSiteError | undefined {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined) {
    return site === 'same-origin' || site === 'none' ? undefined : new DashboardCrossSiteError(`a write from ${site} is refused`);
  }
  const origin = req.headers.origin;
  if (origin === undefined) return undefined;
  const host = req.headers['x-forwarded-host'] ?? req.headers.host;
  let from: string;
  try {
    from = new URL(origin).host;
  } catch {
    from = origin;
  }
  return from === host ? undefined : new DashboardCrossSiteError('a write from another origin is refused');
}

/** JSON only, checked whether or not a body parser read the body: a cross-site form cannot send it without a preflight. */
function assertJson(req: IncomingMessage): void {
  const type = String(req.headers['content-type'] ?? '');
  if (!/^application\/json\b/i.test(type))
    throw new FlightValidationError('POST /forget takes a JSON body (content-type: application/json)');
}

async function readJson(req: IncomingMessage & { body?: unknown }): Promise<unknown> {
  // A body parser in front of the dashboard (express.json(), Fastify) has read it already.
  if (req.body !== undefined) return req.body;
  let size = 0;
  const parts: Buffer[] = [];
  for await (const part of req as AsyncIterable<Buffer>) {
    size += part.length;
    if (size > BODY_LIMIT) throw new FlightValidationError(`the body is over ${BODY_LIMIT} bytes`);
    parts.push(part);
  }
  try {
    return JSON.parse(Buffer.concat(parts).toString('utf8'));
  } catch {
    throw new FlightValidationError('the body is not valid JSON');
  }
}

async function forget(endpoints: DashboardEndpoints, req: IncomingMessage, res: ServerResponse, body?: unknown): Promise<void> {
  if (endpoints.readOnly)
    return problem(res, 403, new DashboardReadOnlyError('the dashboard is read-only (readOnly: false allows forget)'));
  const refused = crossSite(req);
  if (refused) return problem(res, 403, refused);
  try {
    assertJson(req);
    const input = (body === undefined ? await readJson(req) : body) as { stage?: unknown; key?: unknown } | null;
    if (typeof input?.stage !== 'string' || typeof input.key !== 'string')
      throw new FlightValidationError('the body must be {"stage": string, "key": string}');
    const forgotten = await endpoints.singleFlight.forget(input.stage, input.key);
    send(res, 200, 'application/json', JSON.stringify({ stage: input.stage, key: input.key, forgotten }));
  } catch (error) {
    if (error instanceof FlightValidationError) return problem(res, 400, error);
    if (error instanceof FlightError) return problem(res, 503, error);
    throw error;
  }
}

/** Answers one dashboard request; `body` is the parsed body when the framework has read it. */
export async function serveRoute(
  endpoints: DashboardEndpoints,
  route: DashboardRoute,
  req: IncomingMessage,
  res: ServerResponse,
  body?: unknown,
): Promise<void> {
  switch (route) {
    case 'page': {
      const { html, csp } = renderPage();
      return send(res, 200, 'text/html; charset=utf-8', html, { 'content-security-policy': csp, 'referrer-policy': 'no-referrer' });
    }
    case 'state':
      return send(res, 200, 'application/json', JSON.stringify(await endpoints.state()));
    case 'node':
      return send(res, 200, 'application/json', JSON.stringify(endpoints.node()));
    case 'events':
      return endpoints.openFeed(res);
    case 'forget':
      return forget(endpoints, req, res, body);
  }
}
