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
import { onFreePorts, PortTakenError } from '@flight/test-servers';

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
  let served: Omit<TestNode, 'nodeId' | 'flight' | 'close'> & { stop: () => Promise<void> };
  try {
    served = await serve(options, dashboardOptions);
  } catch (error) {
    await flight.close();
    await coordinator.close();
    redis.disconnect();
    // Another process took the port after it was picked (see startPeers).
    throw (error as NodeJS.ErrnoException).code === 'EADDRINUSE' ? new PortTakenError(options.port ?? 0, String(error)) : error;
  }
  const { stop, ...dashboard } = served;
  return {
    nodeId: options.nodeId,
    flight,
    ...dashboard,
    async close() {
      await stop();
      await coordinator.close();
      redis.disconnect();
    },
  };
}

/**
 * Starts nodes whose dashboards name one another as peers: `options` gets `count` free ports to build them
 * with, and is asked again with fresh ones when a port was taken before its node could listen on it.
 */
export function startPeers(count: number, options: (ports: number[]) => NodeOptions[]): Promise<TestNode[]> {
  return onFreePorts(count, async (ports) => {
    const started: TestNode[] = [];
    try {
      for (const node of options(ports)) started.push(await startNode(node));
      return started;
    } catch (error) {
      await Promise.all(started.map((node) => node.close()));
      throw error;
    }
  });
}

/** Mounts the dashboard on the node's framework and listens. */
async function serve(
  options: NodeOptions,
  dashboardOptions: FlightDashboardOptions,
): Promise<{ dashboardUrl: string; dashboard?: FlightDashboard; stop: () => Promise<void> }> {
  let dashboard: FlightDashboard | undefined;
  let url: string;
  let stop: () => Promise<void>;
  if (options.framework === 'express') {
    dashboard = createFlightDashboard(dashboardOptions);
    const app = express();
    app.use(options.mount, dashboard.handler);
    const server: Server = createServer(app).listen(options.port ?? 0, '127.0.0.1');
    try {
      await once(server, 'listening');
    } catch (error) {
      dashboard.close();
      throw error;
    }
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${options.mount}`;
    stop = async () => {
      dashboard!.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    };
  } else {
    const app = Fastify();
    await app.register(fastifyFlightDashboard, { prefix: options.mount, ...dashboardOptions });
    let address: string;
    try {
      address = await app.listen({ port: options.port ?? 0, host: '127.0.0.1' });
    } catch (error) {
      await app.close();
      throw error;
    }
    url = `${address}${options.mount}`;
    stop = async () => {
      app.server.closeAllConnections();
      await app.close();
    };
  }
  return { dashboardUrl: url, ...(dashboard ? { dashboard } : {}), stop };
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
