/**
 * A simulated app server for fault tests: `createSingleFlight` over its own ioredis coordinator (own
 * connection, so one node's connection can be broken alone), with a counting upstream whose value is a
 * pure function of the key (so a wrong answer is detectable).
 */
import { createSingleFlight, type FlightMode, type SingleFlight, type StagePolicyInput } from '@flight/core';
import { createIoredisCoordinator } from '@flight/redis-ioredis';

export const STAGE = 'rel';

/** The only right answer for `key`. */
export const expectedValue = (key: string) => `v:${key}`;

/** Short lease timings so faults show within seconds. */
export const FAST_POLICY: StagePolicyInput = {
  heartbeatIntervalMs: 500,
  takeoverAfterMs: 1200,
  pollIntervalMs: 200,
  waitTimeoutMs: 6000,
  maxRunMs: 30_000,
  l1: { enabled: false },
  guard: { retry: false, timeoutMs: 0, circuitBreaker: false, bulkhead: false },
};

export interface TestNode {
  readonly id: string;
  readonly flight: SingleFlight;
  /** Upstream calls made by this node, per key. */
  readonly runs: Map<string, number>;
  readonly events: { takeovers: number; leaseLost: number; fenced: number; fallbacks: number };
  /** Calls `execute` with the counting upstream (taking `delayMs`, honouring the abort signal). */
  call(key: string, delayMs?: number): Promise<{ value: string; role: string; epoch: number | undefined }>;
  totalRuns(): number;
  close(): Promise<void>;
}

export function startNode(options: {
  id: string;
  url: string;
  mode?: FlightMode;
  prefix?: string;
  commandTimeoutMs?: number;
  policy?: StagePolicyInput;
  fallbackCooldownMs?: number;
}): TestNode {
  const coordinator = createIoredisCoordinator({
    redis: { lazyConnect: false, maxRetriesPerRequest: 1, enableOfflineQueue: true, ...redisUrl(options.url) },
    prefix: options.prefix ?? 'rel',
    commandTimeoutMs: options.commandTimeoutMs ?? 500,
  });
  const flight = createSingleFlight({
    coordinator,
    mode: options.mode ?? 'distributed',
    nodeId: options.id,
    fallbackCooldownMs: options.fallbackCooldownMs ?? 200,
    defaults: { ...FAST_POLICY, ...options.policy },
  });
  const runs = new Map<string, number>();
  const events = { takeovers: 0, leaseLost: 0, fenced: 0, fallbacks: 0 };
  flight.on('takeover', () => events.takeovers++);
  flight.on('lease-lost', () => events.leaseLost++);
  flight.on('fenced', () => events.fenced++);
  flight.on('fallback', () => events.fallbacks++);
  return {
    id: options.id,
    flight,
    runs,
    events,
    async call(key, delayMs = 50) {
      const result = await flight.execute(STAGE, key, async (ctx) => {
        runs.set(key, (runs.get(key) ?? 0) + 1);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, delayMs);
          ctx.signal.addEventListener('abort', () => {
            clearTimeout(timer);
            resolve();
          });
        });
        if (ctx.signal.aborted) throw ctx.signal.reason;
        return expectedValue(key);
      });
      return { value: result.value, role: result.role, epoch: result.epoch };
    },
    totalRuns: () => [...runs.values()].reduce((a, b) => a + b, 0),
    async close() {
      await flight.close();
      await coordinator.close();
    },
  };
}

function redisUrl(url: string): { host: string; port: number; password?: string; username?: string } {
  const u = new URL(url);
  return {
    host: u.hostname,
    port: Number(u.port || 6379),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
  };
}
