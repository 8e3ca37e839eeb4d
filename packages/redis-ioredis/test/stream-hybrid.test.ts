/**
 * Hybrid mode, streamed flight, on a redis-server of the test's own killed mid-stream: the owner's run goes
 * on for its node's callers (as a hybrid owner's run does when it cannot store its result); callers on
 * another node that already had chunks end with E_FLIGHT_STREAM_INTERRUPTED, or with onRestart 'restart'
 * follow the run their node falls back to.
 */
import { createSingleFlight, FlightStreamInterruptedError, FlightStreamRestart, type SingleFlight } from '@flight/core';
import { startRedisServer, type RedisServer } from '@flight/redis-test-kit';
import { afterEach, describe, expect, it } from 'vitest';
import { createIoredisCoordinator } from '../src/index.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let server: RedisServer | undefined;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  await server?.stop();
  server = undefined;
});

function hybridNode(url: string, nodeId: string): SingleFlight {
  const u = new URL(url);
  const coordinator = createIoredisCoordinator({
    redis: { host: u.hostname, port: Number(u.port), maxRetriesPerRequest: 1, enableOfflineQueue: true },
    prefix: 'stream-hybrid',
    commandTimeoutMs: 300,
  });
  const flight = createSingleFlight({
    coordinator,
    mode: 'hybrid',
    nodeId,
    fallbackCooldownMs: 5000,
    telemetry: false,
    // Short leases and polls; no guard extras (a retry would hide what the run did).
    defaults: {
      heartbeatIntervalMs: 500,
      takeoverAfterMs: 1200,
      pollIntervalMs: 100,
      l1: { enabled: false },
      guard: { retry: false, timeoutMs: 0 },
    },
  });
  closers.push(async () => {
    await flight.close();
    await coordinator.close();
  });
  return flight;
}

describe('hybrid streamed flight: Redis dies mid-stream', () => {
  it("the owner's callers get the whole run (one supplier run); other nodes' callers get a typed error or the run they fall back to", async () => {
    server = await startRedisServer();
    const [a, b] = [hybridNode(server.url, 'a'), hybridNode(server.url, 'b')];
    const runs = { a: 0, b: 0 };
    const tokens = (node: 'a' | 'b') =>
      async function* () {
        runs[node]++;
        for (let i = 0; i < 10; i++) {
          await sleep(100);
          yield `${node}${i}`;
        }
      };
    const key = 'k';
    const collect = async (stream: AsyncIterable<unknown>, into: unknown[]) => {
      for await (const chunk of stream) into.push(chunk);
    };
    const owned: unknown[][] = [[], [], []];
    const owners = owned.map((into) => collect(a.executeStream('s', key, tokens('a')), into));
    // Node a owns the run (its callers get chunks before node b calls).
    while (owned[0]!.length < 1) await sleep(10);
    const erroring: unknown[] = [];
    const restarting: unknown[] = [];
    const errored = collect(b.executeStream('s', key, tokens('b')), erroring).then(
      () => undefined,
      (e: unknown) => e,
    );
    const restarted = collect(b.executeStream('s', key, tokens('b'), { onRestart: 'restart' }), restarting);
    while (erroring.length < 3 || restarting.length < 3) await sleep(10);
    await server.stop();
    await Promise.all(owners);
    const run = Array.from({ length: 10 }, (_, i) => `a${i}`);
    for (const chunks of owned) expect(chunks).toEqual(run);
    expect(runs.a).toBe(1);
    // Node b: its callers had chunks of a's run; it falls back to a run of its own.
    expect(await errored).toBeInstanceOf(FlightStreamInterruptedError);
    expect(run.slice(0, erroring.length)).toEqual(erroring);
    await restarted;
    const marker = restarting.findIndex((c) => c instanceof FlightStreamRestart);
    expect(marker).toBeGreaterThanOrEqual(3);
    expect(restarting.slice(0, marker)).toEqual(run.slice(0, marker));
    expect(restarting.slice(marker + 1)).toEqual(Array.from({ length: 10 }, (_, i) => `b${i}`));
    expect(runs.b).toBe(1);
  }, 30_000);
});
