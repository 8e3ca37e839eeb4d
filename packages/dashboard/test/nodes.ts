/**
 * Nodes of a test cluster: each a real HTTP server (Express or Fastify) with its own single-flight on a
 * real Redis and the dashboard mounted, as an application would mount it.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSingleFlight, type FlightMode, type SingleFlight } from '@flight/core';
import { createIoredisCoordinator } from '@flight/redis-ioredis';
import express from 'express';
import Fastify from 'fastify';
import { Redis } from 'ioredis';
import { createFlightDashboard, type FlightDashboard, type FlightDashboardOptions } from '../src/index.js';
import { fastifyFlightDashboard } from '../src/fastify.js';

export interface TestNode {
  nodeId: string;
  flight: SingleFlight;
  /** The dashboard's base URL on this node. */
  dashboardUrl: string;
  /** Express: the dashboard object, to read its state directly. */
  dashboard?: FlightDashboard;
  close(): Promise<void>;
}

export interface NodeOptions {
  nodeId: string;
  redisUrl: string;
  prefix: string;
  framework: 'express' | 'fastify';
  mount: string;
  /** The port to listen on (0: any). */
  port?: number;
  mode?: FlightMode;
  dashboard?: Partial<Omit<FlightDashboardOptions, 'singleFlight'>>;
}

export async function startNode(options: NodeOptions): Promise<TestNode> {
  const redis = new Redis(options.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false });
  redis.on('error', () => {});
  // Without an offline queue a command fails at once while Redis is down (the degraded-node test).
  await once(redis, 'ready');
  const coordinator = createIoredisCoordinator({ client: redis, prefix: options.prefix });
  const flight = createSingleFlight({
    nodeId: options.nodeId,
    coordinator,
    mode: options.mode ?? 'distributed',
    stages: { answers: { resultTtlMs: 60_000 } },
  });
  const dashboardOptions = { singleFlight: flight, inspector: coordinator, stages: ['answers'], ...options.dashboard };
  let dashboard: FlightDashboard | undefined;
  let url: string;
  let stop: () => Promise<void>;
  if (options.framework === 'express') {
    dashboard = createFlightDashboard(dashboardOptions);
    const app = express();
    app.use(options.mount, dashboard.handler);
    const server: Server = createServer(app).listen(options.port ?? 0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${options.mount}`;
    stop = async () => {
      dashboard!.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    };
  } else {
    const app = Fastify();
    await app.register(fastifyFlightDashboard, { prefix: options.mount, ...dashboardOptions });
    const address = await app.listen({ port: options.port ?? 0, host: '127.0.0.1' });
    url = `${address}${options.mount}`;
    stop = async () => {
      app.server.closeAllConnections();
      await app.close();
    };
  }
  return {
    nodeId: options.nodeId,
    flight,
    dashboardUrl: url,
    dashboard,
    async close() {
      await stop();
      await coordinator.close();
      redis.disconnect();
    },
  };
}

/** Waits until `check` returns a truthy value (polling), or fails with `what`. */
export async function until<T>(what: string, check: () => T | Promise<T>, timeoutMs = 10_000): Promise<NonNullable<Awaited<T>>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<Awaited<T>>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A promise and its resolve, to hold a supplier until the test lets it finish. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}
