/**
 * The contenders, each behind one tiny interface so every scenario treats them alike.
 *
 * - naive: every caller calls the upstream.
 * - local: @flight/core in `local` mode (in-process single-flight only).
 * - redlock: the common recipe with the `redlock` package (its default retry settings).
 * - bentocache: `getOrSet` with a memory L1 and the Redis L2 driver.
 * - cache-manager: 7.x `wrap` over two Keyv stores, memory then `@keyv/redis` (the multi-store setup of
 *   its README); `wrap` coalesces concurrent callers in-process only.
 * - flight-ioredis / flight-node-redis: @flight/core in `distributed` mode on our Redis coordinators.
 */
import { createSingleFlight, type SingleFlight, type StagePolicyInput } from '@flight/core';
import { Cluster, Redis } from 'ioredis';
import { createClient, createCluster } from 'redis';
import Redlock from 'redlock';
import { BentoCache, bentostore } from 'bentocache';
import { memoryDriver } from 'bentocache/drivers/memory';
import { redisDriver } from 'bentocache/drivers/redis';
import { createCache } from 'cache-manager';
import { Keyv } from 'keyv';
import { createKeyv as createKeyvRedis } from '@keyv/redis';
import { nowMs } from '../stats.js';

export const CONTENDERS = ['naive', 'local', 'redlock', 'bentocache', 'cache-manager', 'flight-ioredis', 'flight-node-redis'] as const;
export type ContenderName = (typeof CONTENDERS)[number];
export const FLIGHT_CONTENDERS: readonly ContenderName[] = ['flight-ioredis', 'flight-node-redis'];
export const REDIS_CONTENDERS: readonly ContenderName[] = ['redlock', 'bentocache', 'cache-manager', 'flight-ioredis', 'flight-node-redis'];
/** The tools a user would otherwise put in front of the call: the distinct-keys target is the best of them. */
export const PEER_CONTENDERS: readonly ContenderName[] = ['redlock', 'bentocache', 'cache-manager'];

export const STAGE = 'bench';

export interface ContenderOptions {
  redisUrl: string;
  /** Every key this contender writes starts with it. */
  prefix: string;
  /** How long a result is stored. */
  resultTtlMs: number;
  /** Masters of a Redis Cluster to use instead of `redisUrl` (flight contenders only). */
  cluster?: { host: string; port: number }[];
  /** Cluster node address (`host:port` as the cluster announces it) → where to connect instead (a proxy). */
  natMap?: Record<string, { host: string; port: number }>;
  /**
   * Record when each owner published its result (`Contender.completions`): only the wake-up scenario
   * reads it; elsewhere the map and the timestamp would be harness cost charged to the contender.
   * @default false
   */
  recordCompletions?: boolean;
  /**
   * Keep a result this long past `resultTtlMs`, served at once while a refresh runs (the expiry scenario):
   * flight's stage option `stale.whileRevalidateMs`, bentocache's `grace` (its soft timeout 0 returns the
   * graced value at once), cache-manager's `refreshThreshold` over a TTL this much longer.
   */
  staleMs?: number;
}

/**
 * A coordinator's notification counters since it started, as `@flight/redis-*` coordinators expose
 * them (`coordinator.notifications`): notices received, of which for flights without a waiter in this
 * process, subscriber bytes received, channels subscribed now.
 */
export interface NotificationCounters {
  received: number;
  foreign: number;
  bytes: number;
  channels: number;
}

/** The coordinator's `notifications` counters, or null when it has none (checked at run time). */
export function readNotificationCounters(coordinator: unknown): NotificationCounters | null {
  const n = (coordinator as { notifications?: unknown } | null)?.notifications;
  if (!n || typeof n !== 'object') return null;
  const { received, foreign, bytes, channels } = n as Record<string, unknown>;
  if (![received, foreign, bytes, channels].every((x) => typeof x === 'number' && Number.isFinite(x))) return null;
  return { received, foreign, bytes, channels } as NotificationCounters;
}

export interface RunResult<T> {
  value: T;
  /** owner | follower | replay | local | cache | naive ... as the contender reports it. */
  role: string;
}

export interface Contender {
  readonly name: ContenderName;
  run<T>(key: string, supplier: () => Promise<T>): Promise<RunResult<T>>;
  /** When this process published each key's result as the owner (shared monotonic ms); empty unless `recordCompletions`. */
  readonly completions: Map<string, number>;
  /** How followers were woken (flight only). */
  readonly woken: Record<string, number>;
  /** The coordinator's notification counters (flight only; null where the coordinator has none). */
  notifications?(): NotificationCounters | null;
  /** Callers parked as followers in this process right now (flight only). */
  waiting?(): number;
  /**
   * Streams the supplier's chunks to this caller (naive and flight only): the chunks as they come, then the
   * caller's role; with `after` (flight only), resumes a caller that received `index` chunks of run `epoch`.
   */
  stream?(key: string, supplier: () => AsyncIterable<string>, after?: { epoch: number | undefined; index: number }): StreamRun;
  close(): Promise<void>;
}

/** One streaming call: its chunks, and its role once they are all received. */
export interface StreamRun {
  chunks: AsyncIterable<string>;
  role(): Promise<string>;
  /** The epoch of the run the chunks came from (flight only). */
  epoch?(): number | undefined;
}

type FlightFactory = (options: { client: any; prefix?: string }) => any;

/** Loads an adapter factory, or null while the adapter package does not export it yet. */
export async function loadFlightFactory(name: ContenderName): Promise<FlightFactory | null> {
  try {
    if (name === 'flight-ioredis') {
      const mod: Record<string, unknown> = await import('@flight/redis-ioredis');
      return typeof mod.createIoredisCoordinator === 'function' ? (mod.createIoredisCoordinator as FlightFactory) : null;
    }
    if (name === 'flight-node-redis') {
      const mod: Record<string, unknown> = await import('@flight/redis-node');
      return typeof mod.createNodeRedisCoordinator === 'function' ? (mod.createNodeRedisCoordinator as FlightFactory) : null;
    }
  } catch (error) {
    console.warn(`[bench] ${name} could not be loaded: ${(error as Error).message}`);
  }
  return null;
}

/** The contenders that can run now (the flight adapters only once their packages export a factory). */
export async function availableContenders(wanted: readonly ContenderName[] = CONTENDERS): Promise<ContenderName[]> {
  const out: ContenderName[] = [];
  for (const name of wanted) {
    if (FLIGHT_CONTENDERS.includes(name) && !(await loadFlightFactory(name))) continue;
    out.push(name);
  }
  return out;
}

/** Policy used by both of our contenders: guard extras off so nothing but coordination is measured. */
function flightDefaults(resultTtlMs: number): StagePolicyInput {
  return {
    resultTtlMs,
    failureTtlMs: resultTtlMs,
    terminalTtlMs: resultTtlMs,
    l1: { enabled: false },
    guard: { bulkhead: false, retry: false, circuitBreaker: false, timeoutMs: 60_000 },
  };
}

function wrapFlight(
  name: ContenderName,
  flight: SingleFlight,
  completions: Map<string, number>,
  woken: Record<string, number>,
  close: () => Promise<void>,
  coordinator?: { waiting?: number },
): Contender {
  flight.on('waited', (e) => {
    woken[e.woken] = (woken[e.woken] ?? 0) + 1;
  });
  return {
    name,
    completions,
    woken,
    notifications: () => readNotificationCounters(coordinator),
    waiting: () => Number(coordinator?.waiting ?? 0),
    async run(key, supplier) {
      const r = await flight.execute(STAGE, key, () => supplier());
      return { value: r.value, role: r.role };
    },
    stream(key, supplier, after) {
      const stream = flight.executeStream(STAGE, key, () => supplier(), after ? { after } : {});
      return { chunks: stream, role: async () => (await stream.result()).role, epoch: () => stream.epoch };
    },
    close,
  };
}

/** Records when `complete` returned (the result is stored and the terminal event published). */
function instrumentCoordinator(coordinator: any, completions: Map<string, number>): any {
  const complete = coordinator.complete.bind(coordinator);
  coordinator.complete = async (fence: { key: string }, input: unknown) => {
    const reply = await complete(fence, input);
    completions.set(fence.key, nowMs());
    return reply;
  };
  return coordinator;
}

/** A flight adapter as a contender: its coordinator on `client` (instrumented), distributed mode. */
function flightContender(
  name: ContenderName,
  factory: FlightFactory,
  client: unknown,
  options: ContenderOptions,
  completions: Map<string, number>,
  woken: Record<string, number>,
  closeClient: () => Promise<void>,
): Contender {
  const created = factory({ client, prefix: options.prefix });
  const coordinator = options.recordCompletions ? instrumentCoordinator(created, completions) : created;
  const defaults = flightDefaults(options.resultTtlMs);
  if (options.staleMs) defaults.stale = { whileRevalidateMs: options.staleMs };
  const flight = createSingleFlight({ coordinator, mode: 'distributed', defaults });
  const close = async () => {
    await flight.close();
    await coordinator.close?.();
    await closeClient();
  };
  return wrapFlight(name, flight, completions, woken, close, coordinator);
}

export async function createContender(name: ContenderName, options: ContenderOptions): Promise<Contender> {
  const completions = new Map<string, number>();
  const woken: Record<string, number> = {};
  if (options.cluster && !FLIGHT_CONTENDERS.includes(name)) throw new Error(`${name} is not set up for Redis Cluster in the bench`);
  switch (name) {
    case 'naive':
      return {
        name,
        completions,
        woken,
        async run(_key, supplier) {
          return { value: await supplier(), role: 'naive' };
        },
        stream: (_key, supplier) => ({ chunks: supplier(), role: async () => 'naive' }),
        async close() {},
      };
    case 'local': {
      const flight = createSingleFlight({ mode: 'local', defaults: flightDefaults(options.resultTtlMs) });
      return wrapFlight(name, flight, completions, woken, () => flight.close());
    }
    case 'redlock': {
      const client = new Redis(options.redisUrl, { lazyConnect: false });
      // The library's defaults: retryCount 10, retryDelay 200 ms, retryJitter 200 ms, driftFactor 0.01.
      const redlock = new Redlock([client as any]);
      redlock.on('error', () => {});
      const lockTtlMs = 30_000;
      return {
        name,
        completions,
        woken,
        async run(key, supplier) {
          const cacheKey = `${options.prefix}cache:${key}`;
          const hit = await client.get(cacheKey);
          if (hit !== null) return { value: JSON.parse(hit), role: 'cache' };
          const lock = await redlock.acquire([`${options.prefix}lock:${key}`], lockTtlMs);
          try {
            const again = await client.get(cacheKey);
            if (again !== null) return { value: JSON.parse(again), role: 'follower' };
            const value = await supplier();
            await client.set(cacheKey, JSON.stringify(value), 'PX', options.resultTtlMs);
            if (options.recordCompletions) completions.set(key, nowMs());
            return { value, role: 'owner' };
          } finally {
            await lock.release().catch(() => {});
          }
        },
        async close() {
          client.disconnect();
        },
      };
    }
    case 'bentocache': {
      const client = new Redis(options.redisUrl);
      const bento = new BentoCache({
        default: 'cache',
        stores: {
          cache: bentostore()
            .useL1Layer(memoryDriver({ maxSize: '200mb' }))
            .useL2Layer(redisDriver({ connection: client, prefix: options.prefix.replace(/:$/, '') })),
        },
      });
      return {
        name,
        completions,
        woken,
        async run(key, supplier) {
          let ran = false;
          const value = await bento.getOrSet({
            key,
            ttl: options.resultTtlMs,
            ...(options.staleMs ? { grace: options.staleMs } : {}),
            factory: async () => {
              ran = true;
              return supplier();
            },
          });
          return { value: value as any, role: ran ? 'owner' : 'cache' };
        },
        async close() {
          await bento.disconnectAll().catch(() => {});
          client.disconnect();
        },
      };
    }
    case 'cache-manager': {
      const redisStore = createKeyvRedis(options.redisUrl, { namespace: options.prefix.replace(/:$/, ''), keyPrefixSeparator: ':' });
      const memoryStore = new Keyv();
      redisStore.on('error', () => {});
      memoryStore.on('error', () => {});
      const cache = createCache({ stores: [memoryStore, redisStore] });
      return {
        name,
        completions,
        woken,
        async run(key, supplier) {
          let ran = false;
          const value = await cache.wrap(
            key,
            async () => {
              ran = true;
              return supplier();
            },
            options.resultTtlMs + (options.staleMs ?? 0),
            options.staleMs ?? 0,
          );
          return { value: value as any, role: ran ? 'owner' : 'cache' };
        },
        async close() {
          await cache.disconnect().catch(() => {});
        },
      };
    }
    case 'flight-ioredis': {
      const factory = await loadFlightFactory(name);
      if (!factory) throw new Error(`${name}: @flight/redis-ioredis does not export createIoredisCoordinator yet`);
      // On Cluster: sharded subscribers (one per master) so SSUBSCRIBE reaches the shard of its slot.
      const client = options.cluster
        ? new Cluster(options.cluster, { shardedSubscribers: true, ...(options.natMap ? { natMap: options.natMap } : {}) })
        : new Redis(options.redisUrl);
      client.on('error', () => {});
      return flightContender(name, factory, client, options, completions, woken, async () => client.disconnect());
    }
    case 'flight-node-redis': {
      const factory = await loadFlightFactory(name);
      if (!factory) throw new Error(`${name}: @flight/redis-node does not export createNodeRedisCoordinator yet`);
      const client = options.cluster
        ? createCluster({
            rootNodes: options.cluster.map((m) => ({ url: `redis://${m.host}:${m.port}` })),
            ...(options.natMap ? { nodeAddressMap: options.natMap } : {}),
          })
        : createClient({ url: options.redisUrl });
      client.on('error', () => {});
      await client.connect();
      return flightContender(name, factory, client, options, completions, woken, async () => {
        if ('destroy' in client) client.destroy();
        else await (client as { close(): Promise<void> }).close().catch(() => {});
      });
    }
  }
}
