/**
 * Where a follower's wake-up time goes: one owner process (this one) and one follower process (forked,
 * 5 callers per flight, joining 5 ms after the owner; upstream 20 ms, 1 KB result), both adapters' built
 * packages (or FLIGHT_BUNDLE). Per flight, on the machine's monotonic clock: the owner's `complete`
 * returned → the notice reached the follower's subscriber (`onMessage`) → the first and last caller returned.
 * `node bench/profiles/wakeup-trace.mjs ioredis|node-redis [flights]` (add --cpu-prof via FOLLOWER_PROF=1 for the follower)
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { profileCoordinator } from './profile-coordinator.mjs';

const bundle = process.env.FLIGHT_BUNDLE;
const core = bundle ? await import(bundle) : await import('@flight/core');
const io = bundle ? await import(bundle) : await import('@flight/redis-ioredis');
const nr = bundle ? await import(bundle) : await import('@flight/redis-node');
const now = () => Number(process.hrtime.bigint()) / 1e6;
const adapter = process.argv[2] ?? 'ioredis';
const flights = Number(process.argv[3] ?? 200);
const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const text = 'lorem ipsum dolor sit amet '.repeat(40);
const payload = { id: 1, title: text.slice(0, 100), body: text.slice(0, 870) };
const policy = {
  resultTtlMs: 10_000,
  failureTtlMs: 10_000,
  terminalTtlMs: 10_000,
  l1: { enabled: false },
  guard: { bulkhead: false, retry: false, circuitBreaker: false, timeoutMs: 60_000 },
};

async function make(prefix, onMessage) {
  const { coordinator, close: closeCoordinator } = await profileCoordinator(bundle ? io : { ...io, ...nr }, adapter, url, prefix);
  const flight = core.createSingleFlight({ mode: 'distributed', coordinator, defaults: policy });
  const close = async () => {
    await flight.close();
    await closeCoordinator();
  };
  return { flight, coordinator, close };
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

if (process.argv[4] === 'follower') {
  const prefix = process.argv[5];
  // When the notice's bytes reached the follower's socket (before any client code parsed them).
  let noticeAt = 0;
  const net = await import('node:net');
  const emit = net.Socket.prototype.emit;
  net.Socket.prototype.emit = function (event, chunk, ...rest) {
    if (event === 'data' && Buffer.isBuffer(chunk) && chunk.includes('SUCCEEDED')) noticeAt = now();
    return emit.call(this, event, chunk, ...rest);
  };
  const { flight, coordinator, close } = await make(prefix);
  // When the coordinator's wait resolved (the notice parsed and matched), before core decoded the result.
  let waitedAt = 0;
  const waitForTerminal = coordinator.waitForTerminal.bind(coordinator);
  coordinator.waitForTerminal = (ref, options) => waitForTerminal(ref, options).then((e) => ((waitedAt = now()), e));
  // The bare hop to this process, for comparison: a plain ioredis subscriber of its own.
  const raw = new Redis(url);
  await raw.subscribe(`${prefix}:hop`);
  raw.on('message', () => process.send({ type: 'hop', at: now() }));
  process.on('message', async (m) => {
    if (m.type === 'join') {
      const t = now();
      const ends = await Promise.all(
        Array.from({ length: 5 }, () => flight.execute('bench', m.key, async () => payload).then(() => now())),
      );
      process.send({
        type: 'done',
        key: m.key,
        joinAt: t,
        noticeAt,
        waitedAt,
        msgAt: globalThis.__tMsg,
        finishAt: globalThis.__tFinish,
        coreAt: globalThis.__tCore,
        decodedAt: globalThis.__tDecoded,
        first: Math.min(...ends),
        last: Math.max(...ends),
        received: coordinator.notifications.received,
      });
    } else if (m.type === 'close') {
      raw.disconnect();
      await close();
      process.exit(0);
    }
  });
  process.send({ type: 'ready' });
} else {
  const prefix = `prof-wake-${process.pid}`;
  const { flight, coordinator, close } = await make(prefix);
  const completeAt = new Map();
  const complete = coordinator.complete.bind(coordinator);
  coordinator.complete = async (fence, input) => {
    const r = await complete(fence, input);
    completeAt.set(fence.key, now());
    return r;
  };
  const child = fork(fileURLToPath(import.meta.url), [adapter, String(flights), 'follower', prefix], {
    execArgv: process.env.FOLLOWER_PROF ? ['--cpu-prof', '--cpu-prof-interval=25', '--cpu-prof-dir=/tmp/prof/wake'] : [],
  });
  const replies = new Map();
  child.on('message', (m) => replies.get(m.type)?.(m));
  const next = (type) => new Promise((r) => replies.set(type, r));
  await next('ready');
  const toFirst = [];
  const toLast = [];
  const toNotice = [];
  const toWaited = [];
  const extra = {};
  for (let i = 0; i < flights + 10; i++) {
    const key = `k${i}`;
    const owner = flight.execute('bench', key, async () => {
      await sleep(20);
      return payload;
    });
    await sleep(5);
    const done = next('done');
    child.send({ type: 'join', key });
    await owner;
    const d = await done;
    if (i >= 10) {
      toFirst.push(d.first - completeAt.get(key));
      toNotice.push(d.noticeAt - completeAt.get(key));
      toWaited.push(d.waitedAt - completeAt.get(key));
      for (const f of ['msgAt', 'finishAt', 'coreAt', 'decodedAt']) if (d[f]) (extra[f] ??= []).push(d[f] - completeAt.get(key));
      toLast.push(d.last - completeAt.get(key));
    }
    await sleep(2);
  }
  // The bare PUBLISH -> SUBSCRIBE hop to the same follower process, from PUBLISH returned (like `complete` returned).
  const publisher = new Redis(url);
  const hops = [];
  for (let i = 0; i < flights + 10; i++) {
    const arrived = next('hop');
    await publisher.publish(`${prefix}:hop`, 'x');
    const sent = now();
    const { at } = await arrived;
    if (i >= 10) hops.push(at - sent);
    await sleep(25);
  }
  publisher.disconnect();
  const p = (a, q) => a.sort((x, y) => x - y)[Math.floor(q * (a.length - 1))].toFixed(3);
  for (const [f, a] of Object.entries(extra)) console.log(f, p(a, 0.5));
  console.log(
    JSON.stringify({
      adapter,
      flights,
      hopP50: p(hops, 0.5),
      noticeP50: p(toNotice, 0.5),
      waitedP50: p(toWaited, 0.5),
      firstP50: p(toFirst, 0.5),
      lastP50: p(toLast, 0.5),
      lastP99: p(toLast, 0.99),
    }),
  );
  child.send({ type: 'close' });
  await close();
}
