/**
 * The untouched complete (untouched-complete.ts) on real servers, shared by both adapters, run on a Valkey
 * 8.1 (which has `SET … IFEQ`) and on the system's redis-server (7.0 here: no conditional SET, so the
 * first complete learns that and the `compareAndSet` script does the write from then on). On each, a run
 * nobody touched completes with that one conditional write, whose record is the complete script's byte for
 * byte, and every run somebody touched is left to the complete script.
 */
import { randomUUID } from 'node:crypto';
import { createManualClock, registerCoordinatorConformance } from '@flight/core/testing';
import type { AcquireInput, AcquireReply, Fence } from '@flight/core/adapter';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type RedisDriver,
  createRedisCoordinator,
  type RedisCoordinator,
  flightKeys,
  RECORD_HEADER,
  LUA_SCRIPTS,
} from '@flight/redis-scripts';
import type { RedisAdapterUnderTest } from './adapter-suite';
import { rawCommand, serverTimeMs, scanKeysWithoutTtl, startRedisServer, type RedisServer, startValkeyServer } from '@flight/test-servers';
import { countedDriver } from './counted-driver';

const LEASE = { takeoverAfterMs: 3000, leaseTtlMs: 6000, maxRunMs: 20_000 };
const PREFIX = 'untouched';

const input = (stage: string, key: string, ownerToken = randomUUID()): AcquireInput => ({
  stage,
  key,
  ...LEASE,
  ownerId: 'node-a',
  ownerToken,
  startRunning: true,
});

/** The fence of an acquire reply, with its handle, as core passes it to the run's owner writes. */
const fenceOf = (stage: string, key: string, { meta, handle }: AcquireReply): Fence => ({
  stage,
  key,
  ownerId: 'node-a',
  ownerToken: meta.ownerToken,
  epoch: meta.epoch,
  handle,
});

/**
 * `c`, past its first command (the scripts' version check: until then acquires run the script) and, unless
 * `learn` is false, past two untouched completes (the first may go by the script, until the server's clock
 * is known; the first conditional write learns whether the server has `SET … IFEQ`).
 */
async function warmed<C extends RedisCoordinator>(c: C, learn = true): Promise<C> {
  await c.readMeta({ stage: 'warm', key: 'up' });
  for (let i = 0; learn && i < 2; i++) {
    const key = randomUUID();
    const reply = await c.acquire(input('warm', key));
    await c.complete(fenceOf('warm', key, reply), { result: 'warm', resultTtlMs: 60_000 });
  }
  return c;
}

const stored = (server: RedisServer, stage: string, key: string) => server.command('GET', flightKeys(PREFIX, { stage, key }).meta);

export function registerUntouchedCompleteSuite(adapter: RedisAdapterUnderTest): void {
  describe(`${adapter.name}: the untouched complete (SET … IFEQ, or the compareAndSet script)`, () => {
    registerOnServer(adapter, 'Valkey 8.1', startValkeyServer);
    registerOnServer(adapter, 'the system redis-server', startRedisServer);
  });
}

function registerOnServer(adapter: RedisAdapterUnderTest, serverName: string, start: () => Promise<RedisServer>): void {
  describe(`on ${serverName}`, () => {
    let server: RedisServer;
    /** Whether the server has `SET … IFEQ`. */
    let conditional: boolean;
    /** How the counted driver names the conditional write on this server, once the coordinator knows it. */
    let cas: string;
    beforeAll(async () => {
      server = await start();
      const answer = await rawCommand(server.port, ['SET', 'probe', 'x', 'PX', '1000', 'IFEQ', 'y']);
      conditional = !(answer instanceof Error);
      if (!conditional) expect(String(answer)).toMatch(/syntax error/i);
      cas = conditional ? 'SET IFEQ' : 'compareAndSet';
    });
    afterAll(async () => {
      await server?.stop();
    });

    // Runs nobody touched complete without the complete script here, and the rules must hold all the same.
    describe('conformance', () => {
      registerCoordinatorConformance({
        name: `${adapter.name} on ${serverName}, untouched completes`,
        create: (now) => {
          const coordinator = adapter.coordinator(server.url, { prefix: `${PREFIX}-conformance`, clock: now });
          return { coordinator, cleanup: () => coordinator.close() };
        },
        modelRuns: 100,
        storesTraceparent: true,
      });

      it('leaves no key without a TTL', async () => {
        expect(await scanKeysWithoutTtl(server.url, `${PREFIX}-conformance:*`)).toEqual([]);
      });
    });

    it('asks for the conditional SET once: if the server lacks it, the compareAndSet script writes from then on', async () => {
      const sent: string[] = [];
      const clock = createManualClock(Date.now());
      const c = await warmed(
        createRedisCoordinator(countedDriver(adapter.driver(server.url), sent), { prefix: PREFIX, clock: clock.now }),
        false,
      );
      try {
        const runs: string[][] = [];
        for (const key of ['a', 'b', 'c']) {
          const reply = await c.acquire(input('old', key));
          sent.length = 0;
          expect(await c.complete(fenceOf('old', key, reply), { result: key, resultTtlMs: 60_000 })).toMatchObject({ ok: true });
          runs.push([...sent]);
          expect(await c.readResult({ stage: 'old', key })).toBe(key);
        }
        expect(runs).toEqual(
          conditional ? [['SET IFEQ'], ['SET IFEQ'], ['SET IFEQ']] : [['SET IFEQ', 'compareAndSet'], ['compareAndSet'], ['compareAndSet']],
        );
      } finally {
        await c.close();
      }
    });

    it('completes a run nobody touched with one conditional write, writing the record the complete script writes, byte for byte (text and bytes)', async () => {
      const clock = createManualClock(Date.now());
      const sent: string[] = [];
      const driver = adapter.driver(server.url);
      const plain = await warmed(createRedisCoordinator(countedDriver(driver, sent), { prefix: PREFIX, clock: clock.now }));
      const scripted = await warmed(
        createRedisCoordinator(countedDriver(adapter.driver(server.url), [], false), { prefix: PREFIX, clock: clock.now }),
      );
      try {
        expect(driver.setIfEqual).toBeTypeOf('function');
        for (const [n, result] of [
          [0, 'one ✓'],
          // A result stored as bytes (the envelope codec's `f2.b.` form), bytes that are no UTF-8 among them.
          [1, Uint8Array.from([...Buffer.from('f2.b.'), 0, 255, 128, 10, 0xc3])],
        ] as const) {
          const token = randomUUID();
          sent.length = 0;
          const a = await plain.acquire(input('u', `plain${n}`, token));
          const b = await scripted.acquire(input('u', `script${n}`, token));
          expect([a.outcome, b.outcome]).toEqual(['OWNER_NEW', 'OWNER_NEW']);
          await clock.advance(25);
          const replyA = await plain.complete(fenceOf('u', `plain${n}`, a), { result, resultTtlMs: 60_000 });
          const replyB = await scripted.complete(fenceOf('u', `script${n}`, b), { result, resultTtlMs: 60_000 });
          expect(sent).toEqual(['SET NX GET', cas]);
          // The same reply but for the key (stage and key are no part of the record).
          expect(replyB.ok && { ...replyB, meta: { ...replyB.meta, requestKey: `plain${n}` } }).toEqual(replyA);
          expect(replyA).toMatchObject({
            ok: true,
            meta: { status: 'SUCCEEDED', updatedAt: clock.now(), expireAt: clock.now() + 60_000 },
          });
          const [recordA, recordB] = [await stored(server, 'u', `plain${n}`), await stored(server, 'u', `script${n}`)];
          expect(typeof recordA).toBe('string');
          expect(recordA).toEqual(recordB);
          // Every reader sees the same result, as stored by either path.
          const same = (read: unknown) => (typeof result === 'string' ? read : Buffer.from(read as Uint8Array));
          const expected = typeof result === 'string' ? result : Buffer.from(result);
          expect(same(await scripted.readResult({ stage: 'u', key: `plain${n}` }))).toEqual(expected);
          expect(same(await plain.readResult({ stage: 'u', key: `script${n}` }))).toEqual(expected);
          const ttl = Number(await server.command('PTTL', flightKeys(PREFIX, { stage: 'u', key: `plain${n}` }).meta));
          expect(ttl).toBeGreaterThan(50_000);
        }
        expect(await scanKeysWithoutTtl(server.url, `${PREFIX}:*`)).toEqual([]);
      } finally {
        await plain.close();
        await scripted.close();
      }
    });

    it('stamps a result anew when its write ran late (behind a pause of writes): it is kept resultTtlMs from a recent stamp, as by the complete script', async () => {
      const sent: string[] = [];
      // The server's own clock this time (the estimate is what a late write gets wrong).
      const c = await warmed(createRedisCoordinator(countedDriver(adapter.driver(server.url), sent), { prefix: PREFIX }));
      try {
        const a = await c.acquire(input('late', 'k'));
        expect(a.outcome).toBe('OWNER_NEW');
        sent.length = 0;
        await server.command('CLIENT', 'PAUSE', 1300, 'WRITE');
        expect(await c.complete(fenceOf('late', 'k', a), { result: 'late', resultTtlMs: 8000 })).toMatchObject({ ok: true });
        // The first write waited 1.3 s before it ran: a second one stamped the record anew.
        expect(sent).toEqual([cas, cas]);
        const record = String(await stored(server, 'late', 'k'));
        const [at, width] = RECORD_HEADER.expireAt;
        const left = Number(record.slice(at, at + width)) - (await serverTimeMs(server.port));
        // Not 8000 less the 1.3 s the first write waited.
        expect(left).toBeGreaterThan(8000 - 500);
        expect(await c.readResult({ stage: 'late', key: 'k' })).toBe('late');
      } finally {
        await c.close();
      }
    });

    it('keeps the stored result when a restamp after a late reply fails: the complete is OK, no complete script, no retry', async () => {
      const sent: string[] = [];
      const driver = countedDriver(adapter.driver(server.url), sent);
      let armed = false;
      let calls = 0;
      // Once armed, the first conditional write's reply comes back late; the restamp it calls for loses its connection.
      const late = async (write: () => Promise<boolean>) => {
        if (!armed) return write();
        if (++calls === 1) {
          const set = await write();
          await new Promise((resolve) => setTimeout(resolve, 1100));
          return set;
        }
        sent.push(`${cas} (lost)`);
        throw new Error('connection lost');
      };
      const flaky: RedisDriver = {
        ...driver,
        setIfEqual: (key, value, ttlMs, expected) =>
          conditional ? late(() => driver.setIfEqual!(key, value, ttlMs, expected)) : driver.setIfEqual!(key, value, ttlMs, expected),
        evalsha: (sha, keys, args) =>
          sha === LUA_SCRIPTS.compareAndSet.sha
            ? late(() => driver.evalsha(sha, keys, args) as Promise<boolean>)
            : driver.evalsha(sha, keys, args),
      };
      const c = await warmed(createRedisCoordinator(flaky, { prefix: PREFIX }));
      try {
        const a = await c.acquire(input('lost', 'k'));
        expect(a.outcome).toBe('OWNER_NEW');
        sent.length = 0;
        armed = true;
        expect(await c.complete(fenceOf('lost', 'k', a), { result: 'kept', resultTtlMs: 8000 })).toMatchObject({ ok: true });
        expect(sent).toEqual([cas, `${cas} (lost)`]);
        expect(await c.readResult({ stage: 'lost', key: 'k' })).toBe('kept');
      } finally {
        await c.close();
      }
    });

    it('leaves every touched run to the complete script: a follower joined (and is woken), a heartbeat ran, the run was taken over or forgotten; and a result shorter-lived than the lease', async () => {
      const clock = createManualClock(Date.now());
      const sent: string[] = [];
      const c = await warmed(createRedisCoordinator(countedDriver(adapter.driver(server.url), sent), { prefix: PREFIX, clock: clock.now }));
      const other = await warmed(adapter.coordinator(server.url, { prefix: PREFIX, clock: clock.now }));
      const owned = async (key: string) => {
        const reply = await c.acquire(input('t', key));
        expect(reply.outcome).toBe('OWNER_NEW');
        return fenceOf('t', key, reply);
      };
      const completing = async (fence: Fence) => {
        sent.length = 0;
        const reply = await c.complete(fence, { result: `done ${fence.key}`, resultTtlMs: 60_000 });
        return { reply, sent: [...sent] };
      };
      try {
        // A follower joined: the conditional write finds the record changed, the script completes and notifies.
        const joinedFence = await owned('joined');
        const follower = await other.acquire({ ...input('t', 'joined'), ownerId: 'node-b' });
        expect(follower).toMatchObject({ outcome: 'FOLLOWER_WAIT', meta: { followers: 1 } });
        const woken = other.waitForTerminal(joinedFence, { epoch: follower.meta.epoch, timeoutMs: 5000, handle: follower.handle });
        expect(await completing(joinedFence)).toMatchObject({ reply: { ok: true }, sent: [cas, 'complete'] });
        expect(await woken).toMatchObject({ status: 'SUCCEEDED', epoch: joinedFence.epoch });
        expect(await other.readResult({ stage: 't', key: 'joined' })).toBe('done joined');

        // A heartbeat was sent: no conditional write is tried at all.
        const beatFence = await owned('beat');
        expect(await c.heartbeat(beatFence, LEASE)).toMatchObject({ ok: true });
        expect(await completing(beatFence)).toMatchObject({ reply: { ok: true }, sent: ['complete'] });

        // Taken over after the lease: the stale owner's complete writes nothing, the script fences it.
        const staleFence = await owned('stale');
        await clock.advance(LEASE.takeoverAfterMs + 1);
        const takeover = await other.acquire({ ...input('t', 'stale'), ownerId: 'node-b' });
        expect(takeover.outcome).toBe('OWNER_TAKEOVER');
        const before = await stored(server, 't', 'stale');
        expect(await completing(staleFence)).toMatchObject({ reply: { ok: false, code: 'FENCED' }, sent: [cas, 'complete'] });
        expect(await stored(server, 't', 'stale')).toEqual(before);
        expect(await other.readMeta({ stage: 't', key: 'stale' })).toMatchObject({ status: 'RUNNING', epoch: takeover.meta.epoch });

        // Forgotten while it ran: the script's FORGOTTEN, as without the conditional write.
        const forgottenFence = await owned('forgotten');
        expect(await other.forget({ stage: 't', key: 'forgotten' })).toMatchObject({ ok: true });
        expect(await completing(forgottenFence)).toMatchObject({ reply: { ok: false, code: 'FORGOTTEN' }, sent: [cas, 'complete'] });

        // Past its lease by the clock of record, untaken: the script decides (the conditional write is not tried).
        const lateFence = await owned('late');
        await clock.advance(LEASE.leaseTtlMs);
        expect(await completing(lateFence)).toMatchObject({ reply: { ok: false, code: 'FENCED' }, sent: ['complete'] });

        // A result kept for less than the lease has left: a write landing late could store it dead, the script decides.
        const briefFence = await owned('brief');
        sent.length = 0;
        expect(await c.complete(briefFence, { result: 'brief', resultTtlMs: 1000 })).toMatchObject({ ok: true });
        expect(sent).toEqual(['complete']);

        // A second complete of a completed run: the script's idempotent OK.
        const twiceFence = await owned('twice');
        expect(await completing(twiceFence)).toMatchObject({ reply: { ok: true }, sent: [cas] });
        expect(await completing(twiceFence)).toMatchObject({ reply: { ok: true }, sent: ['complete'] });
        expect(await scanKeysWithoutTtl(server.url, `${PREFIX}:*`)).toEqual([]);
      } finally {
        await c.close();
        await other.close();
      }
    });
  });
}
