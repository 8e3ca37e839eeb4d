/**
 * A benchmark worker process (forked by pool.ts): holds one contender at a time and runs the tasks
 * the parent sends over IPC.
 */
import { Redis } from 'ioredis';
import {
  createContender,
  type Contender,
  type ContenderName,
  type ContenderOptions,
  type NotificationCounters,
} from './contenders/index.js';
import { classifyNotices, startCountingProxy, type CountingProxy, type SubscriberTraffic } from './proxy.js';
import { nowMs } from './stats.js';
import { herd, herds, hold, memory, ownWaiters, series, waiters } from './tasks.js';
import { streamHerd } from './scenarios/stream.js';
import { streamReader } from './scenarios/stream-resume.js';

let contender: Contender | undefined;
/** The bare hop's subscriber in this process (`hopListen` / `hopCollect`): message index -> arrival (shared ms). */
let hop: { sub: Redis; arrivals: [number, number][] } | undefined;
let counter: Redis | undefined;
let held: ReturnType<typeof hold> | undefined;
let parked: ReturnType<typeof waiters> | undefined;
/**
 * Counting proxies between the contender and Redis (one per cluster master), when the scenario
 * observes the subscriber traffic; `proxy` reads them as one.
 */
let proxies: CountingProxy[] = [];
let proxy: { subscriberTraffic(): SubscriberTraffic } | undefined;
let own:
  { waiters: ReturnType<typeof ownWaiters>; keys: string[]; counters: NotificationCounters | null; traffic: SubscriberTraffic } | undefined;

async function dropContender(): Promise<void> {
  await contender?.close();
  contender = undefined;
  await Promise.all(proxies.map((p) => p.close()));
  proxies = [];
  proxy = undefined;
}

/** Puts a counting proxy in front of the contender's Redis (each master of a cluster, through its nat map). */
async function observe(options: ContenderOptions): Promise<ContenderOptions> {
  const targets = options.cluster ?? [{ host: new URL(options.redisUrl).hostname, port: Number(new URL(options.redisUrl).port || 6379) }];
  proxies = await Promise.all(targets.map((t) => startCountingProxy(t, { observeSubscribers: true })));
  proxy = {
    subscriberTraffic: () => {
      const all = proxies.map((p) => p.subscriberTraffic());
      return {
        bytes: all.reduce((n, t) => n + t.bytes, 0),
        messages: all.flatMap((t) => t.messages),
        tags: new Set(all.flatMap((t) => [...t.tags])),
      };
    },
  };
  const at = (p: CountingProxy) => ({ host: '127.0.0.1', port: Number(new URL(p.url).port) });
  if (!options.cluster) return { ...options, redisUrl: proxies[0]!.url };
  return {
    ...options,
    cluster: proxies.map(at),
    natMap: Object.fromEntries(targets.map((t, i) => [`${t.host}:${t.port}`, at(proxies[i]!)])),
  };
}

const minus = (a: NotificationCounters | null | undefined, b: NotificationCounters | null | undefined): NotificationCounters | null =>
  a && b ? { received: a.received - b.received, foreign: a.foreign - b.foreign, bytes: a.bytes - b.bytes, channels: a.channels } : null;

const handlers: Record<string, (args: any) => Promise<unknown>> = {
  /** Subscribes a plain ioredis connection to `channel`; each message (its index) is timed on arrival. */
  async hopListen(args: { url: string; channel: string }) {
    const sub = new Redis(args.url);
    const arrivals: [number, number][] = [];
    sub.on('message', (_channel: string, message: string) => arrivals.push([Number(message), nowMs()]));
    await sub.subscribe(args.channel);
    hop = { sub, arrivals };
    return null;
  },
  async hopCollect() {
    const h = hop;
    hop = undefined;
    h?.sub.disconnect();
    return h?.arrivals ?? [];
  },
  /** Connects the upstream counter once, so contender setups open only the contender's connections. */
  async init(args: { counterUrl: string }) {
    counter ??= new Redis(args.counterUrl);
    await counter.ping();
    return { pid: process.pid };
  },
  async setup(args: { name: ContenderName; options: ContenderOptions; observeSubscribers?: boolean }) {
    await dropContender();
    const options = args.observeSubscribers ? await observe(args.options) : args.options;
    contender = await createContender(args.name, options);
    return { pid: process.pid };
  },
  async teardown() {
    await dropContender();
    return null;
  },
  /** Fan-out: parks one caller on each of `keys` and waits until they are followers. */
  async ownWaitersStart(args: { keys: string[]; settleMs: number }) {
    const c = need();
    const counters = c.notifications?.() ?? null;
    const traffic = proxy?.subscriberTraffic() ?? { bytes: 0, messages: [], tags: new Set<string>() };
    own = { waiters: ownWaiters(c, { keys: args.keys }), keys: args.keys, counters, traffic };
    const parked = await own.waiters.parked(args.settleMs);
    return { parked, channels: c.notifications?.()?.channels ?? null };
  },
  /** Fan-out: waits for the callers; their roles and errors. */
  async ownWaitersFinish() {
    if (!own) throw new Error('no own waiters');
    const result = await own.waiters.finish();
    return {
      calls: result.calls.length,
      errors: result.calls.filter((x) => x.error).length,
      errorSamples: [...new Set(result.calls.filter((x) => x.error).map((x) => x.error))].slice(0, 2),
      roles: result.calls.reduce<Record<string, number>>((acc, x) => ((acc[x.role] = (acc[x.role] ?? 0) + 1), acc), {}),
      upstreamCalls: result.upstreamCalls,
    };
  },
  /**
   * Fan-out, once every flight of every process has completed: the coordinator's counters and the
   * observed subscriber traffic since `ownWaitersStart`.
   */
  async ownWaitersReport() {
    const o = own;
    own = undefined;
    if (!o) throw new Error('no own waiters');
    // Late notices still on their way: read once nothing new arrived for 150 ms (at most 3 s).
    const seen = () => (proxy?.subscriberTraffic().bytes ?? 0) + (need().notifications?.()?.bytes ?? 0);
    for (let last = seen(), quiet = 0, end = Date.now() + 3000; quiet < 3 && Date.now() < end;) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      const now = seen();
      quiet = now === last ? quiet + 1 : 0;
      last = now;
    }
    const counters = minus(need().notifications?.() ?? null, o.counters);
    let observed: { notices: number; own: number; foreign: number; bytes: number; ownFlights: number } | null = null;
    if (proxy) {
      const now = proxy.subscriberTraffic();
      // This process's own flights: the hash tags of the keys its own commands named (it touches no others).
      const messages = now.messages.slice(o.traffic.messages.length);
      observed = {
        notices: messages.length,
        ...classifyNotices(messages, now.tags),
        bytes: now.bytes - o.traffic.bytes,
        ownFlights: now.tags.size,
      };
    }
    // Connections this process opened to each server (each master on Cluster), since its setup.
    return { counters, observed, connectionsOpened: proxies.length ? proxies.map((p) => p.connections()) : null };
  },
  herd: (args) => herd(need(), counter, args),
  herds: (args) => herds(need(), counter, args),
  streamHerd: (args) => streamHerd(need(), counter, args),
  streamReader: (args) => streamReader(need(), counter, args),
  series: (args) => series(need(), counter, args),
  async holdStart(args) {
    held = hold(need(), counter, args);
    return held.started(args.timeoutMs ?? 10_000);
  },
  async holdRelease() {
    const h = held;
    held = undefined;
    if (!h) throw new Error('nothing held');
    return h.release();
  },
  async waitersStart(args) {
    parked = waiters(need(), counter, args);
    const during = await parked.waiting(args.settleMs);
    return { before: parked.before, during };
  },
  async waitersFinish() {
    const p = parked;
    parked = undefined;
    if (!p) throw new Error('no waiters');
    const result = await p.finish();
    return { ...result, after: memory() };
  },
  async memory() {
    return memory();
  },
};

function need(): Contender {
  if (!contender) throw new Error('no contender set up');
  return contender;
}

async function onMessage(message: { id: number; cmd: string; args: unknown }): Promise<void> {
  if (message.cmd === 'exit') {
    await dropContender().catch(() => {});
    counter?.disconnect();
    process.exit(0);
  }
  try {
    const handler = handlers[message.cmd];
    if (!handler) throw new Error(`unknown command ${message.cmd}`);
    const result = await handler(message.args);
    process.send!({ id: message.id, ok: true, result });
  } catch (error) {
    process.send!({ id: message.id, ok: false, error: (error as Error).stack ?? String(error) });
  }
}

process.on('message', (message: { id: number; cmd: string; args: unknown }) => {
  // onMessage answers every failure itself; a send that throws (parent gone) ends the worker.
  onMessage(message).catch(() => process.exit(1));
});

process.on('disconnect', () => process.exit(0));
process.send!({ ready: true });
