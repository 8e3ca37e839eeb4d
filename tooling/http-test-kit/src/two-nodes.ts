/**
 * Two nodes of one cluster inside the test process: each its own single-flight (distributed) and ioredis
 * coordinator on the shared Redis, under one key prefix, serving the same handler through a driver.
 */
import { createSingleFlight, type StagePolicyInput } from '@flight/core';
import { createIoredisCoordinator } from '@flight/redis-ioredis';
import type { Driver, MiddlewareOptions, ServerSetup } from './middleware-suite.js';

export interface TwoNodesSetup {
  /** The nodes' key prefix (unique per test). */
  prefix: string;
  stage: string;
  options?: MiddlewareOptions;
  defaults?: StagePolicyInput;
  handler: ServerSetup['handler'];
  /** Called whenever a node starts waiting for the other node's run (its `follower` event). */
  onFollower?: () => void;
}

/** Starts nodes `a` and `b`; their URLs. Each is closed (server, single-flight, coordinator) by a function pushed on `closing`. */
export async function startTwoNodes(driver: Driver, closing: Array<() => Promise<void>>, setup: TwoNodesSetup): Promise<[string, string]> {
  const urls: string[] = [];
  for (const nodeId of ['a', 'b']) {
    const coordinator = createIoredisCoordinator({ redis: 'redis://127.0.0.1:6379', prefix: setup.prefix });
    const singleFlight = createSingleFlight({ mode: 'distributed', coordinator, nodeId, defaults: setup.defaults ?? {} });
    const { onFollower } = setup;
    if (onFollower) singleFlight.on('follower', () => onFollower());
    const server = await driver.start({ singleFlight, stage: setup.stage, options: setup.options ?? {}, handler: setup.handler });
    closing.push(async () => {
      await server.close();
      await singleFlight.close();
      await coordinator.close();
    });
    urls.push(server.url);
  }
  return urls as [string, string];
}

/** The path a handler was asked for, as the client sent it (some frameworks give it below the `/r` mount point). */
export function requestedPath(path: string): string {
  return path.startsWith('/r/') ? path : `/r${path}`;
}
