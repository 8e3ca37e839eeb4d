/**
 * Redis and network faults (issue #7, items 6-11) with the real coordinator and createSingleFlight,
 * each on a redis-server of the test's own (never the shared 6379). Owner faults (SIGKILL, SIGSTOP)
 * and the basic down/blackhole/subscriber-kill cases live in tooling/redis-test-kit/src/
 * adapter-suite.ts (run by both adapters) and are not repeated here.
 */
import { randomUUID } from 'node:crypto';
import { FlightCoordinationError, FlightError, FlightWaitTimeoutError } from '@flight/core';
import { createIoredisCoordinator } from '@flight/redis-ioredis';
import { flightKeys } from '@flight/redis-scripts';
import { patchFlightRecord, rawCommand, scanKeysWithoutTtl, startRedisServer, type RedisServer } from '@flight/redis-test-kit';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectedValue, recordFigure, sleep, startNode, startTcpProxy, trackUnhandledRejections, type TestNode } from '../src/index.js';

const LEASE = { takeoverAfterMs: 1200, leaseTtlMs: 2400, maxRunMs: 30_000 };

interface Outcome {
  key: string;
  ok: boolean;
  value?: string;
  code?: string;
  ms: number;
  epoch?: number | undefined;
}

async function settle(node: TestNode, key: string, delayMs = 50): Promise<Outcome> {
  const started = Date.now();
  try {
    const r = await node.call(key, delayMs);
    return { key, ok: true, value: r.value, ms: Date.now() - started, epoch: r.epoch };
  } catch (error) {
    return { key, ok: false, code: error instanceof FlightError ? error.code : `untyped:${String(error)}`, ms: Date.now() - started };
  }
}

function summarize(outcomes: Outcome[]) {
  const byCode: Record<string, number> = {};
  for (const o of outcomes) if (!o.ok) byCode[o.code!] = (byCode[o.code!] ?? 0) + 1;
  return {
    requests: outcomes.length,
    answered: outcomes.filter((o) => o.ok).length,
    wrong: outcomes.filter((o) => o.ok && o.value !== expectedValue(o.key)).length,
    untyped: outcomes.filter((o) => !o.ok && o.code!.startsWith('untyped')).length,
    typedErrors: byCode,
    maxMs: Math.max(0, ...outcomes.map((o) => o.ms)),
  };
}

let unhandled: ReturnType<typeof trackUnhandledRejections>;
beforeEach(() => {
  unhandled = trackUnhandledRejections();
});
afterEach(() => {
  unhandled.dispose();
  expect(unhandled.errors, 'no unhandled rejection').toEqual([]);
});

describe('#6 Redis killed mid-flight, restarted empty', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('distributed: fast typed errors, no hang past the wait timeout; hybrid: every request served; both recover; epochs never repeat', async () => {
    const a = startNode({ id: 'a', url: server.url, commandTimeoutMs: 300 });
    const b = startNode({ id: 'b', url: server.url, commandTimeoutMs: 300 });
    const ha = startNode({ id: 'ha', url: server.url, mode: 'hybrid', commandTimeoutMs: 300 });
    const hb = startNode({ id: 'hb', url: server.url, mode: 'hybrid', commandTimeoutMs: 300 });
    try {
      // Epochs before the fault.
      const before = await Promise.all(Array.from({ length: 5 }, (_, i) => settle(a, `pre-${i}`)));
      expect(before.every((o) => o.ok)).toBe(true);
      const epochsBefore = before.map((o) => o.epoch!);

      // Flights in progress (owner on a, followers on b) when Redis dies.
      const keys = Array.from({ length: 6 }, (_, i) => `mid-${i}`);
      const inflight = keys.flatMap((key) => [settle(a, key, 800), settle(b, key, 800)]);
      await sleep(200);
      const killedAt = Date.now();
      await server.stop();
      // Requests that arrive while Redis is down.
      const down = await Promise.all(keys.flatMap((key) => [settle(a, `down-${key}`), settle(b, `down-${key}`)]));
      const hybridDown = await Promise.all(
        keys.flatMap((key) => [
          settle(ha, `hdown-${key}`),
          settle(ha, `hdown-${key}`),
          settle(hb, `hdown-${key}`),
          settle(hb, `hdown-${key}`),
        ]),
      );
      const mid = await Promise.all(inflight);
      const distributed = summarize([...mid, ...down]);
      const hybrid = summarize(hybridDown);
      // Distributed: every caller settles, with the value or a typed error from its command deadline, never by
      // running out its wait.
      expect(distributed.wrong).toBe(0);
      expect(distributed.untyped).toBe(0);
      expect(distributed.typedErrors[FlightWaitTimeoutError.code]).toBeUndefined();
      expect(down.every((o) => !o.ok && o.code === FlightCoordinationError.code)).toBe(true);
      // Hybrid: everything is served, deduplicated per node (≤ 1 upstream call per key per node).
      expect(hybrid.answered).toBe(hybrid.requests);
      expect(hybrid.wrong).toBe(0);
      for (const key of keys) {
        expect(ha.runs.get(`hdown-${key}`)).toBe(1);
        expect(hb.runs.get(`hdown-${key}`)).toBe(1);
      }

      await server.restart();
      const restartedAt = Date.now();
      let recoveredMs = -1;
      for (let i = 0; i < 100; i++) {
        const o = await settle(a, `post-${i}`);
        if (o.ok) {
          recoveredMs = Date.now() - restartedAt;
          break;
        }
        await sleep(50);
      }
      expect(recoveredMs).toBeGreaterThanOrEqual(0);
      await sleep(300); // hybrid cooldown
      const after = await Promise.all([
        ...Array.from({ length: 5 }, (_, i) => settle(a, `pre-${i}`)),
        settle(ha, 'hybrid-after'),
        settle(b, 'pre-0'),
      ]);
      expect(after.every((o) => o.ok && o.value === expectedValue(o.key))).toBe(true);
      expect(after[5]).toMatchObject({ ok: true });
      // Same keys, new owners after the empty restart: every epoch is above every epoch from before.
      const epochsAfter = after.slice(0, 5).map((o) => o.epoch!);
      expect(Math.min(...epochsAfter)).toBeGreaterThan(Math.max(...epochsBefore));
      recordFigure('#6 redis killed + restarted empty', {
        distributed,
        hybrid,
        hybridUpstreamCalls: ha.totalRuns() + hb.totalRuns(),
        hybridDistinctKeys: keys.length,
        downtimeMs: restartedAt - killedAt,
        recoveredMsAfterRestart: recoveredMs,
        epochsRepeated: epochsAfter.filter((e) => epochsBefore.includes(e)).length,
      });
    } finally {
      await Promise.all([a.close(), b.close(), ha.close(), hb.close()]);
    }
  });
});

describe('#7 Redis slow: CLIENT PAUSE, DEBUG SLEEP, a busy script', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  for (const fault of ['CLIENT PAUSE 2000 ALL', 'DEBUG SLEEP 1.5', 'busy script 1.5 s'] as const) {
    it(`${fault}: bounded latency, no duplicate beyond the lease rules, no unhandled rejection`, async () => {
      const a = startNode({ id: 'a', url: server.url, commandTimeoutMs: 1000 });
      const b = startNode({ id: 'b', url: server.url, commandTimeoutMs: 1000 });
      const h = startNode({ id: 'h', url: server.url, mode: 'hybrid', commandTimeoutMs: 1000 });
      try {
        const tag = randomUUID().slice(0, 6);
        const keys = Array.from({ length: 8 }, (_, i) => `slow-${tag}-${i}`);
        const calls = keys.flatMap((key) => [settle(a, key, 1500), settle(b, key, 1500), settle(h, key, 1500)]);
        await sleep(300);
        const faultAt = Date.now();
        if (fault.startsWith('CLIENT')) await server.command('CLIENT', 'PAUSE', 2000, 'ALL');
        else if (fault.startsWith('DEBUG'))
          void rawCommand(server.port, ['DEBUG', 'SLEEP', '1.5'], '127.0.0.1', 5000).catch(() => undefined);
        else {
          await server.command('CONFIG', 'SET', 'busy-reply-threshold', 200);
          void rawCommand(server.port, ['EVAL', 'while true do end', 0], '127.0.0.1', 10_000).catch(() => undefined);
          await sleep(1500);
          await server.command('SCRIPT', 'KILL').catch(() => undefined);
        }
        // Calls started during the fault.
        const during = keys.map((key) => settle(b, `${key}-during`, 100));
        const outcomes = await Promise.all([...calls, ...during]);
        const s = summarize(outcomes);
        const upstream = a.totalRuns() + b.totalRuns() + h.totalRuns();
        const takeovers = a.events.takeovers + b.events.takeovers + h.events.takeovers;
        const leaseLost = a.events.leaseLost + b.events.leaseLost + h.events.leaseLost;
        const fallbacks = h.events.fallbacks;
        expect(s.wrong).toBe(0);
        expect(s.untyped).toBe(0);
        // Duplicates only where the lease rules allow: a takeover after a lost lease, or a hybrid fallback.
        const distinct = keys.length * 2;
        expect(upstream).toBeLessThanOrEqual(distinct + takeovers + leaseLost + fallbacks);
        recordFigure(`#7 ${fault}`, {
          ...s,
          faultMs: Date.now() - faultAt,
          upstreamCalls: upstream,
          distinctKeys: distinct,
          takeovers,
          leaseLost,
          fallbacks,
        });
      } finally {
        await server.command('CONFIG', 'SET', 'busy-reply-threshold', 5000).catch(() => undefined);
        await Promise.all([a.close(), b.close(), h.close()]);
      }
    });
  }
});

describe('#8/#9 lost replies, blackholed and reset connections (TCP proxy)', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('an acquire that lands on the server but whose reply is lost: retry with the same token is idempotent; one owner per epoch', async () => {
    const proxy = await startTcpProxy({ port: server.port });
    const viaProxy = createIoredisCoordinator({ redis: proxy.url, prefix: 'lost', commandTimeoutMs: 300 });
    const direct = createIoredisCoordinator({ redis: server.url, prefix: 'lost', commandTimeoutMs: 1000 });
    try {
      const ref = { stage: 'lost', key: randomUUID() };
      // Load every script on the server first (a dropped NOSCRIPT reply would hide the landing).
      const warm = { stage: 'lost', key: randomUUID() };
      const w = await viaProxy.acquire({ ...warm, ...LEASE, ownerId: 'a', ownerToken: randomUUID() });
      const wf = { ...warm, ownerId: 'a', ownerToken: w.meta.ownerToken, epoch: w.meta.epoch };
      await viaProxy.markRunning(wf, LEASE);
      await viaProxy.complete(wf, { result: 'w', resultTtlMs: 1000 });
      await viaProxy.readMeta(ref);
      proxy.mode = 'drop-replies';
      const token = randomUUID();
      const error = await viaProxy.acquire({ ...ref, ...LEASE, ownerId: 'a', ownerToken: token }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(FlightCoordinationError);
      // It landed: the server holds a's token.
      const landed = await direct.readMeta(ref);
      expect(landed).toMatchObject({ status: 'PENDING', ownerId: 'a', ownerToken: token });
      // Another node only follows.
      const other = await direct.acquire({ ...ref, ...LEASE, ownerId: 'b', ownerToken: randomUUID() });
      expect(other.outcome).toBe('FOLLOWER_WAIT');
      // The client retries (new connection) with the same token: the same epoch, not a second owner.
      proxy.mode = 'pass';
      proxy.resetAll();
      const retry = await viaProxy.acquire({ ...ref, ...LEASE, ownerId: 'a', ownerToken: token });
      expect(retry.outcome).toBe('OWNER_NEW');
      expect(retry.meta.epoch).toBe(landed!.epoch);
      // A complete whose reply is lost, then retried: idempotent, and the stored result is the first.
      const fence = { ...ref, ownerId: 'a', ownerToken: token, epoch: retry.meta.epoch };
      expect((await viaProxy.markRunning(fence, LEASE)).ok).toBe(true);
      proxy.mode = 'drop-replies';
      await expect(viaProxy.complete(fence, { result: 'R1', resultTtlMs: 60_000 })).rejects.toBeInstanceOf(FlightCoordinationError);
      proxy.mode = 'pass';
      proxy.resetAll();
      expect((await viaProxy.complete(fence, { result: 'R2', resultTtlMs: 60_000 })).ok).toBe(true);
      expect(await direct.readResult(ref)).toBe('R1');
      recordFigure('#8 lost acquire/complete replies (coordinator)', {
        sameEpochOnRetry: retry.meta.epoch === landed!.epoch,
        storedResult: 'R1',
      });
    } finally {
      await viaProxy.close();
      await direct.close();
      await proxy.close();
    }
  });

  it('single-flight over lost replies: the owner never runs twice, followers get the owner value', async () => {
    const proxy = await startTcpProxy({ port: server.port });
    const a = startNode({ id: 'a', url: proxy.url, commandTimeoutMs: 300, prefix: 'lost2' });
    const b = startNode({ id: 'b', url: server.url, commandTimeoutMs: 300, prefix: 'lost2' });
    try {
      await settle(a, 'warm');
      // 1. a's acquire lands, its reply is lost: a's caller gets a typed error, a never runs; b takes over after the stale lease.
      proxy.mode = 'drop-replies';
      const aCall = settle(a, 'k1', 100);
      await sleep(450); // past a's 300 ms deadline
      const started = Date.now();
      const bCall = settle(b, 'k1', 100);
      const aResult = await aCall;
      proxy.mode = 'pass';
      proxy.resetAll(); // ioredis reconnects and may re-send the pending acquire: same token, so idempotent
      const bResult = await bCall;
      const takeoverMs = Date.now() - started;
      expect(aResult).toMatchObject({ ok: false, code: FlightCoordinationError.code });
      expect(bResult).toMatchObject({ ok: true, value: expectedValue('k1') });
      expect(a.runs.get('k1') ?? 0).toBe(0);
      expect(b.runs.get('k1')).toBe(1);
      // 2. a owns k2, its completion reply is lost: a's caller still gets the value; b replays the stored one; one run.
      const aRun = settle(a, 'k2', 400);
      await sleep(200);
      proxy.mode = 'drop-replies';
      const aDone = await aRun;
      proxy.mode = 'pass';
      proxy.resetAll();
      const bDone = await settle(b, 'k2');
      expect(aDone).toMatchObject({ ok: true, value: expectedValue('k2') });
      expect(bDone).toMatchObject({ ok: true, value: expectedValue('k2') });
      expect((a.runs.get('k2') ?? 0) + (b.runs.get('k2') ?? 0)).toBe(1);
      recordFigure('#8 lost replies (single-flight)', { upstreamCallsK1: 1, upstreamCallsK2: 1, takeoverAfterLostAcquireMs: takeoverMs });
    } finally {
      await Promise.all([a.close(), b.close()]);
      await proxy.close();
    }
  });

  it('an acquire whose reply is lost past the deadline is repeated once with the same token: the same owner runs once, no takeover', async () => {
    const proxy = await startTcpProxy({ port: server.port });
    const a = startNode({ id: 'a', url: proxy.url, commandTimeoutMs: 500, prefix: 'lost3' });
    const b = startNode({ id: 'b', url: server.url, commandTimeoutMs: 500, prefix: 'lost3' });
    const probe = createIoredisCoordinator({ redis: server.url, prefix: 'lost3' });
    try {
      await settle(a, 'warm');
      proxy.mode = 'drop-replies';
      const started = Date.now();
      const aCall = settle(a, 'k3', 300);
      await sleep(650); // a's acquire got no reply by 500 ms; core repeated it (same token), also unanswered so far
      const landed = await probe.readMeta({ stage: 'rel', key: 'k3' });
      // Created RUNNING: the owner runs at once (no session lock), so its acquire is its only write before complete.
      expect(landed).toMatchObject({ ownerId: 'a', status: 'RUNNING' });
      proxy.mode = 'pass';
      proxy.resetAll(); // ioredis reconnects and re-sends; the repeat answers the same epoch
      const bResult = await settle(b, 'k3');
      const aResult = await aCall;
      expect(aResult).toMatchObject({ ok: true, value: expectedValue('k3'), epoch: landed!.epoch });
      expect(bResult).toMatchObject({ ok: true, value: expectedValue('k3') });
      expect((a.runs.get('k3') ?? 0) + (b.runs.get('k3') ?? 0)).toBe(1);
      expect(a.runs.get('k3')).toBe(1);
      expect(b.events.takeovers).toBe(0);
      recordFigure('#8 lost acquire reply repeated by core', {
        ownerAnsweredMs: aResult.ms,
        totalMs: Date.now() - started,
        upstreamCalls: 1,
        takeovers: 0,
      });
    } finally {
      await Promise.all([a.close(), b.close(), probe.close()]);
      await proxy.close();
    }
  });

  for (const mode of ['blackhole', 'reset'] as const) {
    it(`one node's connection ${mode === 'blackhole' ? 'blackholed' : 'reset'}: it fails by its deadline (distributed) or falls back (hybrid); the others proceed`, async () => {
      const proxy = await startTcpProxy({ port: server.port });
      const a = startNode({ id: 'a', url: proxy.url, commandTimeoutMs: 400, prefix: `iso-${mode}` });
      const ah = startNode({ id: 'ah', url: proxy.url, commandTimeoutMs: 400, prefix: `iso-${mode}`, mode: 'hybrid' });
      const b = startNode({ id: 'b', url: server.url, commandTimeoutMs: 400, prefix: `iso-${mode}` });
      try {
        await Promise.all([settle(a, 'warm'), settle(ah, 'warm2')]);
        proxy.mode = mode;
        if (mode === 'reset') proxy.resetAll();
        const [aOut, ahOut, bOut] = await Promise.all([
          Promise.all(Array.from({ length: 5 }, (_, i) => settle(a, `x${i}`))),
          Promise.all(Array.from({ length: 5 }, (_, i) => settle(ah, `y${i}`))),
          Promise.all(Array.from({ length: 5 }, (_, i) => settle(b, `z${i}`))),
        ]);
        // A blackholed connection never answers: only the command deadline can end these calls.
        expect(aOut.every((o) => !o.ok && o.code === FlightCoordinationError.code)).toBe(true);
        expect(ahOut.every((o) => o.ok && o.value === expectedValue(o.key))).toBe(true);
        expect(bOut.every((o) => o.ok && o.value === expectedValue(o.key))).toBe(true);
        recordFigure(`#9 one node ${mode}`, {
          isolatedDistributedMaxMs: Math.max(...aOut.map((o) => o.ms)),
          isolatedHybridServed: ahOut.filter((o) => o.ok).length,
          healthyNodeMaxMs: Math.max(...bOut.map((o) => o.ms)),
        });
      } finally {
        proxy.mode = 'pass';
        await Promise.all([a.close(), ah.close(), b.close()]);
        await proxy.close();
      }
    });
  }
});

describe('#10 wake-ups: subscriber killed, join/wait race, stream deleted', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('waiters still wake within the polling interval while the subscriber connection keeps being killed', async () => {
    const a = startNode({ id: 'a', url: server.url, prefix: 'wake' });
    const b = startNode({ id: 'b', url: server.url, prefix: 'wake', policy: { pollIntervalMs: 300 } });
    let killing = true;
    try {
      const owner = settle(a, 'k', 600);
      await sleep(100);
      const follower = settle(b, 'k');
      const killer = (async () => {
        while (killing) {
          await server.command('CLIENT', 'KILL', 'TYPE', 'pubsub').catch(() => undefined);
          await sleep(20);
        }
      })();
      const o = await owner;
      const doneAt = Date.now();
      const f = await follower;
      const lateMs = Date.now() - doneAt;
      killing = false;
      await killer;
      expect(o).toMatchObject({ ok: true, value: expectedValue('k') });
      // Answered, so woken before its wait ran out (6 s): by polling, while every notice may be lost.
      expect(f).toMatchObject({ ok: true, value: expectedValue('k') });
      recordFigure('#10 subscriber killed repeatedly', { followerWokeMsAfterOwner: lateMs, pollIntervalMs: 300 });
    } finally {
      killing = false;
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('a terminal event between join and the first wait is not lost; a deleted stream still lets the follower read the state', async () => {
    const owner = createIoredisCoordinator({ redis: server.url, prefix: 'race' });
    const follower = createIoredisCoordinator({ redis: server.url, prefix: 'race' });
    try {
      const figures: Record<string, number> = {};
      for (const variant of ['between-join-and-wait'] as const) {
        const ref = { stage: 'race', key: randomUUID() };
        const own = await owner.acquire({ ...ref, ...LEASE, ownerId: 'a', ownerToken: randomUUID() });
        const fence = { ...ref, ownerId: 'a', ownerToken: own.meta.ownerToken, epoch: own.meta.epoch };
        await owner.markRunning(fence, LEASE);
        const joined = await follower.acquire({ ...ref, ...LEASE, ownerId: 'b', ownerToken: randomUUID() });
        expect(joined.outcome).toBe('FOLLOWER_WAIT');
        await owner.complete(fence, { result: 'v', resultTtlMs: 60_000 });
        const started = Date.now();
        // A wait longer than the test may take: only the terminal event (or its state, read on subscribing) ends it.
        const event = await follower.waitForTerminal(ref, { epoch: joined.meta.epoch, timeoutMs: 3_600_000 });
        figures[variant] = Date.now() - started;
        expect(event).toMatchObject({ status: 'SUCCEEDED', epoch: joined.meta.epoch });
        expect(await follower.readResult(ref)).toBe('v');
      }
      recordFigure('#10 join/wait race', { wokeMs: figures });
    } finally {
      await owner.close();
      await follower.close();
    }
  });
});

describe('#11 out of memory and eviction', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('noeviction OOM during a transition: a typed error, never half-written state', async () => {
    const c = createIoredisCoordinator({ redis: server.url, prefix: 'oom', commandTimeoutMs: 2000 });
    try {
      const ref = { stage: 'oom', key: randomUUID() };
      const own = await c.acquire({ ...ref, ...LEASE, ownerId: 'a', ownerToken: randomUUID() });
      const fence = { ...ref, ownerId: 'a', ownerToken: own.meta.ownerToken, epoch: own.meta.epoch };
      await c.markRunning(fence, LEASE);
      const before = await c.readMeta(ref);
      // Memory above the limit with noeviction: every write is refused with OOM.
      await server.command('CONFIG', 'SET', 'maxmemory-policy', 'noeviction');
      await server.command('CONFIG', 'SET', 'maxmemory', 100 * 1024);
      expect(String(await server.command('SET', 'probe', 'x'))).toMatch(/OOM/);
      const results: Record<string, string> = {};
      const record = async (name: string, op: () => Promise<unknown>) => {
        try {
          const r = (await op()) as { ok?: boolean; outcome?: string };
          results[name] = r.outcome ?? (r.ok ? 'ok' : 'refused');
        } catch (error) {
          results[name] = error instanceof FlightError ? error.code : `untyped:${String(error)}`;
        }
      };
      const newRef = { stage: 'oom', key: randomUUID() };
      await record('acquireNew', () => c.acquire({ ...newRef, ...LEASE, ownerId: 'b', ownerToken: randomUUID() }));
      await record('complete', () => c.complete(fence, { result: 'y'.repeat(1024), resultTtlMs: 60_000 }));
      const afterMeta = await c.readMeta(ref);
      const afterResult = await c.readResult(ref);
      const newMeta = await c.readMeta(newRef);
      await server.command('CONFIG', 'SET', 'maxmemory', 0);
      for (const [name, code] of Object.entries(results)) expect(code, name).not.toMatch(/^untyped/);
      // Every writing script is declared with a `#!lua` shebang and no `allow-oom` flag, so Redis refuses it
      // before it starts: nothing is written, the caller gets a typed coordination error (hybrid falls back).
      expect(results.acquireNew).toBe(FlightCoordinationError.code);
      expect(newMeta).toBeNull();
      expect(results.complete).toBe(FlightCoordinationError.code);
      // Reads (`read` is flagged no-writes) still work under OOM and show the record untouched.
      expect(afterMeta).toEqual(before);
      expect(afterResult).toBeNull();
      // Once memory is available again the same completion goes through.
      expect((await c.complete(fence, { result: 'z', resultTtlMs: 60_000 })).ok).toBe(true);
      expect(await scanKeysWithoutTtl(server, 'oom:*')).toEqual([]);
      recordFigure('#11 OOM noeviction', {
        results,
        halfWritten: false,
        note: 'refused before any write (scripts declared without allow-oom)',
      });
    } finally {
      await server.command('CONFIG', 'SET', 'maxmemory', 0).catch(() => undefined);
      await server.command('FLUSHALL').catch(() => undefined);
      await c.close();
    }
  });

  it('meta evicted mid-run: treated as lost, a new owner runs, and fencing refuses the old owner’s completion', async () => {
    const a = startNode({ id: 'a', url: server.url, prefix: 'evict' });
    const b = startNode({ id: 'b', url: server.url, prefix: 'evict' });
    const probe = createIoredisCoordinator({ redis: server.url, prefix: 'evict' });
    try {
      const ref = { stage: 'rel', key: 'ev' };
      const aCall = settle(a, 'ev', 800);
      await sleep(200);
      const first = await probe.readMeta(ref);
      expect(first).toMatchObject({ ownerId: 'a', status: 'RUNNING' });
      await server.command('DEL', flightKeys('evict', ref).meta);
      const bCall = await settle(b, 'ev', 100);
      const aResult = await aCall;
      const final = await probe.readMeta(ref);
      expect(bCall).toMatchObject({ ok: true, value: expectedValue('ev') });
      expect(aResult.ok ? aResult.value : expectedValue('ev')).toBe(expectedValue('ev'));
      expect(final).toMatchObject({ status: 'SUCCEEDED', ownerId: 'b' });
      expect(final!.epoch).toBeGreaterThan(first!.epoch);
      expect(a.events.fenced + a.events.leaseLost).toBeGreaterThanOrEqual(1);
      expect(await probe.readResult(ref)).toBeTruthy();
      recordFigure('#11 meta evicted', {
        oldOwnerFenced: a.events.fenced,
        oldOwnerLeaseLost: a.events.leaseLost,
        upstreamCalls: a.totalRuns() + b.totalRuns(),
        aOutcome: aResult.ok ? 'value' : aResult.code,
      });
    } finally {
      await Promise.all([a.close(), b.close(), probe.close()]);
    }
  });

  it('meta evicted for real (maxmemory + allkeys-lru): the flight is lost, the old owner is fenced, the next epoch is higher', async () => {
    const c = createIoredisCoordinator({ redis: server.url, prefix: 'lru', commandTimeoutMs: 2000 });
    try {
      const ref = { stage: 'lru', key: randomUUID() };
      const own = await c.acquire({ ...ref, ...LEASE, ownerId: 'a', ownerToken: randomUUID() });
      const fence = { ...ref, ownerId: 'a', ownerToken: own.meta.ownerToken, epoch: own.meta.epoch };
      expect((await c.markRunning(fence, LEASE)).ok).toBe(true);
      const metaKey = flightKeys('lru', ref).meta;
      const info = String(await server.command('INFO', 'memory'));
      const used = Number(/used_memory:(\d+)/.exec(info)![1]);
      await server.command('CONFIG', 'SET', 'maxmemory-policy', 'allkeys-lru');
      await server.command('CONFIG', 'SET', 'maxmemory', used + 512 * 1024);
      let junk = 0;
      // Fill with newer keys (all with a TTL) until Redis evicts the flight's metadata by itself.
      while (Number(await server.command('EXISTS', metaKey)) === 1 && junk < 2000) {
        await server.command('SET', `lru-junk:${junk++}`, 'j'.repeat(8 * 1024), 'PX', 60_000);
      }
      expect(Number(await server.command('EXISTS', metaKey))).toBe(0);
      await server.command('CONFIG', 'SET', 'maxmemory', 0);
      await sleep(2); // the epoch floor is the server clock in ms
      // Treated as lost: the old owner's writes are refused, a new caller owns a higher epoch.
      expect(await c.heartbeat(fence, LEASE)).toMatchObject({ ok: false, code: 'FENCED', status: null });
      expect(await c.complete(fence, { result: 'stale', resultTtlMs: 60_000 })).toMatchObject({ ok: false, code: 'FENCED' });
      const next = await c.acquire({ ...ref, ...LEASE, ownerId: 'b', ownerToken: randomUUID() });
      expect(next.outcome).toBe('OWNER_NEW');
      expect(next.meta.epoch).toBeGreaterThan(fence.epoch);
      const fresh = { ...ref, ownerId: 'b', ownerToken: next.meta.ownerToken, epoch: next.meta.epoch };
      expect((await c.markRunning(fresh, LEASE)).ok).toBe(true);
      expect((await c.complete(fresh, { result: 'fresh', resultTtlMs: 60_000 })).ok).toBe(true);
      // A second completion by the evicted owner is still refused; the stored result is the new owner's.
      expect(await c.complete(fence, { result: 'stale', resultTtlMs: 60_000 })).toMatchObject({
        ok: false,
        code: 'FENCED',
        status: 'SUCCEEDED',
      });
      expect(await c.readResult(ref)).toBe('fresh');
      expect(await scanKeysWithoutTtl(server, '*')).toEqual([]);
      recordFigure('#11 meta evicted by allkeys-lru', {
        junkKeysWritten: junk,
        oldOwnerFenced: true,
        epochGrew: next.meta.epoch - fence.epoch,
      });
    } finally {
      await server.command('CONFIG', 'SET', 'maxmemory', 0).catch(() => undefined);
      await server.command('CONFIG', 'SET', 'maxmemory-policy', 'noeviction').catch(() => undefined);
      await server.command('FLUSHALL').catch(() => undefined);
      await c.close();
    }
  });
});

describe('#4 lease overwritten by hand, #13 node clock skew (real Redis, server clock)', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('#5 cancel cluster-wide and expire a run past its max lifetime, through Redis between two nodes', async () => {
    const { createSingleFlight, FlightCancelledError } = await import('@flight/core');
    // Polling and takeover by heartbeat age lie beyond the test's timeout: only notices and heartbeats act.
    const policy = {
      heartbeatIntervalMs: 500,
      takeoverAfterMs: 600_000,
      leaseTtlMs: 1_200_000,
      pollIntervalMs: 600_000,
      l1: { enabled: false },
      guard: { retry: false as const, timeoutMs: 0 },
    };
    const coordinators = [0, 1].map(() => createIoredisCoordinator({ redis: server.url, prefix: 'cancel' }));
    const [a, b] = coordinators.map((coordinator, i) =>
      createSingleFlight({
        coordinator,
        mode: 'distributed',
        nodeId: `n${i}`,
        defaults: policy,
        stages: { short: { ...policy, maxRunMs: 1000 } },
      }),
    ) as [ReturnType<typeof createSingleFlight>, ReturnType<typeof createSingleFlight>];
    try {
      // Cancel: issued on node b, the owner on node a aborts, everyone gets the typed error.
      let ownerSignal: AbortSignal | undefined;
      const key = randomUUID();
      const owner = a.execute('rel', key, (ctx) => {
        ownerSignal = ctx.signal;
        return new Promise(() => {}); // ignores its signal: only the cancel can end the owner's call
      });
      await sleep(100);
      const follower = b.execute('rel', key, async () => 'never');
      await sleep(100);
      const cancelledAt = Date.now();
      expect(await b.cancel('rel', key, 'user left')).toBe(true);
      await expect(follower).rejects.toBeInstanceOf(FlightCancelledError);
      const followerMs = Date.now() - cancelledAt;
      await expect(owner).rejects.toBeInstanceOf(FlightCancelledError);
      const ownerMs = Date.now() - cancelledAt;
      expect(ownerSignal?.aborted).toBe(true);
      expect(await coordinators[0]!.readMeta({ stage: 'rel', key })).toMatchObject({ status: 'CANCELLED', errorMessage: 'user left' });

      // Expire: a run that never settles passes maxRunMs (1 s); it is EXPIRED and the follower takes over at once.
      const stuckKey = randomUUID();
      const stuck = a.execute('short', stuckKey, () => new Promise(() => {})).catch((error: unknown) => error);
      await sleep(100);
      const started = Date.now();
      const heir = await b.execute('short', stuckKey, async () => 'heir');
      const takeoverMs = Date.now() - started;
      expect(heir).toMatchObject({ value: 'heir', role: 'owner' });
      expect(await stuck).toMatchObject({ errorType: 'TIMEOUT', errorCode: 'E_FLIGHT_LEASE_LOST' });
      recordFigure('#5 cancel and expire over Redis', {
        followerCancelledMs: followerMs,
        ownerCancelledMs: ownerMs,
        expiredTakeoverMs: takeoverMs,
      });
    } finally {
      await Promise.all([a.close(), b.close()]);
      await Promise.all(coordinators.map((c) => c.close()));
    }
  });

  it('#4 an owner whose lease is overwritten in Redis learns it at the next heartbeat: its signal aborts, its completion is refused', async () => {
    const { createSingleFlight } = await import('@flight/core');
    const coordinator = createIoredisCoordinator({ redis: server.url, prefix: 'hijack' });
    const flight = createSingleFlight({
      coordinator,
      mode: 'distributed',
      nodeId: 'a',
      defaults: {
        heartbeatIntervalMs: 500,
        takeoverAfterMs: 1200,
        l1: { enabled: false },
        maxAttempts: 1,
        guard: { retry: false, timeoutMs: 0 },
      },
    });
    const lost: string[] = [];
    flight.on('lease-lost', (e) => lost.push(e.reason));
    let abortedAfterMs = -1;
    try {
      const ref = { stage: 'hj', key: randomUUID() };
      const started = Date.now();
      const call = flight.execute(ref.stage, ref.key, async (ctx) => {
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
        abortedAfterMs = Date.now() - started;
        return 'stale value';
      });
      await sleep(200);
      const key = flightKeys('hijack', ref).meta;
      await server.command(
        'SET',
        key,
        patchFlightRecord(String(await server.command('GET', key)), { ownerToken: 'overwritten-by-hand' }),
        'KEEPTTL',
      );
      const error = await call.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(FlightError);
      expect(lost).toEqual(['fenced']);
      expect(abortedAfterMs).toBeGreaterThan(0);
      expect(await coordinator.readResult(ref)).toBeNull();
      recordFigure('#4 lease overwritten in Redis', {
        leaseLostReason: lost[0],
        signalAbortedAfterMs: abortedAfterMs,
        error: (error as FlightError).code,
      });
    } finally {
      await flight.close();
      await coordinator.close();
    }
  });

  it('#13 a node whose clock is 10 minutes off never takes over a live owner (lease time is the server clock)', async () => {
    const { createSingleFlight } = await import('@flight/core');
    const skewed = (skewMs: number) => ({
      now: () => Date.now() + skewMs,
      setTimeout: (fn: () => void, ms: number) => setTimeout(fn, ms),
      clearTimeout: (h: unknown) => clearTimeout(h as NodeJS.Timeout),
    });
    const make = (id: string, skewMs: number) => {
      const coordinator = createIoredisCoordinator({ redis: server.url, prefix: 'skew' });
      const flight = createSingleFlight({
        coordinator,
        mode: 'distributed',
        nodeId: id,
        clock: skewed(skewMs),
        defaults: {
          heartbeatIntervalMs: 500,
          takeoverAfterMs: 1200,
          pollIntervalMs: 200,
          l1: { enabled: false },
          guard: { retry: false, timeoutMs: 0 },
        },
      });
      let takeovers = 0;
      flight.on('takeover', () => takeovers++);
      return { coordinator, flight, takeovers: () => takeovers };
    };
    const behind = make('behind', -10 * 60_000);
    const ahead = make('ahead', +10 * 60_000);
    let runs = 0;
    const supplier = async () => {
      runs++;
      await sleep(2500);
      return 'v';
    };
    try {
      const first = behind.flight.execute('skew', 'k', supplier);
      await sleep(100);
      const second = ahead.flight.execute('skew', 'k', supplier);
      const [a, b] = await Promise.all([first, second]);
      expect(a.value).toBe('v');
      expect(b).toMatchObject({ value: 'v', role: 'follower' });
      expect(runs).toBe(1);
      expect(behind.takeovers() + ahead.takeovers()).toBe(0);
      recordFigure('#13 node clock skew ±10 min', { upstreamCalls: runs, falseTakeovers: 0, runMs: 2500, takeoverAfterMs: 1200 });
    } finally {
      for (const n of [behind, ahead]) {
        await n.flight.close();
        await n.coordinator.close();
      }
    }
  });
});
