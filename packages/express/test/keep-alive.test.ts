/**
 * The disconnect signal belongs to the HTTP/1 connection (one per keep-alive connection, not one per
 * request): the requests carried by the connection must not leave listeners on it, or a long-lived
 * connection would collect one per request. Core's `untilAborted` keeps one listener per signal for all
 * the races on it; nothing else may stay.
 */
import { getEventListeners } from 'node:events';
import { Agent, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSingleFlight } from '@flight/core';
import { disconnectSignal } from '@flight/http-shared';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { createFlightMiddleware } from '../src/index.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

function send(
  agent: Agent,
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, agent, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the disconnect signal of a keep-alive connection', () => {
  it("is one signal for every request of the connection, and finished requests leave no listener on it but core's one", async () => {
    const singleFlight = createSingleFlight({ mode: 'local' });
    closers.push(() => singleFlight.close());
    const app = express();
    const signals = new Set<AbortSignal>();
    app.get('/item/:id', createFlightMiddleware({ singleFlight, stage: 'keepalive-get' }), (req, res) => {
      res.json({ id: req.params.id });
    });
    app.post(
      '/pay/:id',
      createFlightMiddleware({ singleFlight, stage: 'keepalive-pay', idempotency: { inFlight: 'conflict' } }),
      (req, res) => {
        res.status(201).json({ paid: req.params.id });
      },
    );
    app.get('/listeners', (_req, res) => {
      const signal = disconnectSignal(res);
      signals.add(signal);
      res.json({ listeners: getEventListeners(signal, 'abort').length });
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    closers.push(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
    const { port } = server.address() as AddressInfo;
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    closers.push(async () => agent.destroy());

    for (let i = 0; i < 20; i++) {
      expect((await send(agent, port, 'GET', `/item/${i}`)).status).toBe(200);
      const paid = await send(agent, port, 'POST', `/pay/${i}`, { 'idempotency-key': `"key-${i}"` });
      expect(paid).toEqual({ status: 201, body: JSON.stringify({ paid: String(i) }) });
    }
    const after = await send(agent, port, 'GET', '/listeners');
    const again = await send(agent, port, 'GET', '/listeners');
    expect(JSON.parse(after.body)).toEqual({ listeners: 1 });
    expect(JSON.parse(again.body)).toEqual({ listeners: 1 });
    expect(signals.size).toBe(1);
  });
});
