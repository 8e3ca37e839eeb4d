/**
 * The middleware suite's sharing cases over cleartext HTTP/2 (h2c), for drivers whose framework serves it
 * (Koa on `node:http2`, Fastify `http2: true`). An HTTP/2 request names its host in `:authority`, carries
 * no `headersDistinct`, and multiplexes many requests on one connection.
 */
import { connect, type ClientHttp2Session, type OutgoingHttpHeaders } from 'node:http2';
import { describe, expect, it } from 'vitest';
import type { MiddlewareOptions, ServerSetup } from './middleware-suite.js';

type Serve = (
  handler: ServerSetup['handler'],
  options?: MiddlewareOptions,
  expected?: number,
) => Promise<{ url: string; calls: () => number }>;

interface H2Answer {
  status: number;
  body: string;
  role: string | undefined;
}

/** One request on `session`; `headers` may set `:authority` and repeat a field (an array value). */
function h2Send(session: ClientHttp2Session, path: string, headers: OutgoingHttpHeaders = {}, body?: string): Promise<H2Answer> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': body === undefined ? 'GET' : 'POST', ':path': path, ...headers });
    let status = 0;
    let role: string | undefined;
    const chunks: Buffer[] = [];
    stream.on('response', (head) => {
      status = Number(head[':status']);
      role = head['x-flight-role'] as string | undefined;
    });
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve({ status, body: Buffer.concat(chunks).toString(), role }));
    stream.on('error', reject);
    stream.end(body);
  });
}

async function withSession<T>(url: string, fn: (session: ClientHttp2Session) => Promise<T>): Promise<T> {
  const session = connect(url);
  try {
    return await fn(session);
  } finally {
    session.close();
  }
}

const hostOf = (headers: Record<string, string | string[] | undefined>) => String(headers[':authority'] ?? headers.host);

export function registerHttp2Cases(serve: Serve): void {
  describe('over HTTP/2', () => {
    it('runs the handler once for concurrent identical GETs to one host', async () => {
      const { url, calls } = await serve(() => ({ kind: 'text', body: 'shared' }), {}, 4);
      const answers = await withSession(url, (session) =>
        Promise.all(Array.from({ length: 4 }, () => h2Send(session, '/r/h2-same', { ':authority': 'a.example' }))),
      );
      expect(calls()).toBe(1);
      expect(answers.map((a) => [a.status, a.body])).toEqual(Array(4).fill([200, 'shared']));
    });

    it('never shares between different :authority hosts (the tenant is the host)', async () => {
      const { url, calls } = await serve((req) => ({ kind: 'text', body: `host ${hostOf(req.headers)}` }), {}, 4);
      const answers = await withSession(url, (session) =>
        Promise.all([0, 1, 2, 3].map((i) => h2Send(session, '/r/h2-vhost', { ':authority': i % 2 ? 'a.example' : 'b.example' }))),
      );
      expect(calls()).toBe(2);
      for (const [i, answer] of answers.entries()) expect(answer.body).toBe(`host ${i % 2 ? 'a.example' : 'b.example'}`);
    });

    it('never shares between different Authorization headers', async () => {
      const { url, calls } = await serve((req) => ({ kind: 'text', body: `for ${req.headers.authorization}` }), {}, 2);
      const answers = await withSession(url, (session) =>
        Promise.all([0, 1].map((i) => h2Send(session, '/r/h2-auth', { authorization: `Bearer ${i}` }))),
      );
      expect(calls()).toBe(2);
      expect(answers.map((a) => a.body)).toEqual(['for Bearer 0', 'for Bearer 1']);
    });

    it('runs an Idempotency-Key request once and replays it to a retry; a repeated key header is a 400', async () => {
      let n = 0;
      const { url, calls } = await serve(() => ({ kind: 'json', status: 201, body: { order: ++n } }), { idempotency: true }, 2);
      const headers = { 'idempotency-key': '"h2-order"', 'content-type': 'application/json' };
      const [first, second] = await withSession(url, (session) =>
        Promise.all([h2Send(session, '/r/h2-orders', headers, '{"qty":1}'), h2Send(session, '/r/h2-orders', headers, '{"qty":1}')]),
      );
      const retry = await withSession(url, (session) => h2Send(session, '/r/h2-orders', headers, '{"qty":1}'));
      expect(calls()).toBe(1);
      expect([first!.status, second!.status, retry.status]).toEqual([201, 201, 201]);
      expect(new Set([first!.body, second!.body, retry.body])).toEqual(new Set(['{"order":1}']));
      const repeated = await withSession(url, (session) =>
        h2Send(session, '/r/h2-orders', { 'idempotency-key': ['"a"', '"b"'], 'content-type': 'application/json' }, '{}'),
      );
      expect(repeated.status).toBe(400);
      expect(calls()).toBe(1);
    });
  });
}
