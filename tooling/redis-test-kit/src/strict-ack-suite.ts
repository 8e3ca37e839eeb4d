/**
 * Strict replica acknowledgement (`waitReplicas.unacknowledged`) against a real primary and its replica: a
 * replica that is cut off (SIGSTOP) keeps taking ownership from counting — the caller never runs its
 * supplier on it, in distributed and in hybrid mode — and a lease renewal it did not acknowledge is no
 * renewal. With the replica back, the same owner write counts at once.
 */
import { randomUUID } from 'node:crypto';
import { createSingleFlight, FlightCoordinationError, FlightReplicationError } from '@flight/core';
import type { AcquireInput } from '@flight/core/adapter';
import type { RedisCoordinator } from '@flight/redis-scripts';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { rawCommand, replicaInSync, startRedisServer, startTcpProxy, type RedisServer } from '@flight/test-servers';
import type { RedisAdapterUnderTest } from './adapter-suite';

const LEASE = { takeoverAfterMs: 3000, leaseTtlMs: 6000, maxRunMs: 20_000 };

const input = (key: string, ownerId = 'node-a'): AcquireInput => ({ stage: 'strict', key, ...LEASE, ownerId, ownerToken: randomUUID() });

export function registerStrictAckSuite(adapter: RedisAdapterUnderTest): void {
  describe(`${adapter.name}: strict replica acknowledgement`, () => {
    let primary: RedisServer;
    let replica: RedisServer;
    const open: RedisCoordinator[] = [];
    const coordinator = (unacknowledged: 'keep' | 'retry' | 'fail', retryForMs = 60_000) => {
      const c = adapter.coordinator(primary.url, {
        prefix: 'strict',
        waitReplicas: { replicas: 1, timeoutMs: 100, unacknowledged, retryForMs },
      });
      open.push(c);
      return c;
    };
    const pauseReplica = () => process.kill(replica.pid, 'SIGSTOP');
    const resumeReplica = () => process.kill(replica.pid, 'SIGCONT');

    beforeAll(async () => {
      primary = await startRedisServer();
      replica = await startRedisServer({ args: ['--replicaof', '127.0.0.1', String(primary.port)] });
      await replicaInSync(replica.port);
    }, 30_000);
    afterEach(async () => {
      resumeReplica();
      await Promise.all(open.splice(0).map((c) => c.close()));
    });
    afterAll(async () => {
      await replica?.stop();
      await primary?.stop();
    });

    it('with the replica in sync, taking ownership and renewing the lease count at once', async () => {
      const c = coordinator('fail');
      const taking = input(randomUUID());
      const reply = await c.acquire({ ...taking, startRunning: true });
      expect(reply.outcome).toBe('OWNER_NEW');
      const fence = { stage: 'strict', key: taking.key, ownerId: 'node-a', ownerToken: taking.ownerToken, epoch: reply.meta.epoch };
      expect((await c.heartbeat(fence, LEASE)).ok).toBe(true);
      expect((await c.complete(fence, { result: 'v', resultTtlMs: 5000 })).ok).toBe(true);
    });

    it("'fail': an acquire no replica acknowledged does not make an owner; the run is given up for the next caller", async () => {
      const strict = coordinator('fail');
      const other = coordinator('keep');
      const key = randomUUID();
      pauseReplica();
      const error = await strict.acquire(input(key)).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(FlightReplicationError);
      expect(error).toMatchObject({ code: 'E_FLIGHT_REPLICATION', acknowledged: 0, required: 1 });
      // Given up as a retryable failure: the next caller takes it over at once instead of waiting for its lease.
      expect((await other.acquire(input(key, 'node-b'))).outcome).toBe('OWNER_TAKEOVER');
    });

    it("'retry': the caller becomes the owner only once the replica has the record; meanwhile others follow it", async () => {
      const strict = coordinator('retry');
      const other = coordinator('keep');
      const key = randomUUID();
      pauseReplica();
      let settled = false;
      const owner = strict.acquire(input(key)).finally(() => {
        settled = true;
      });
      // The record is on the primary and kept alive: another caller joins it.
      while ((await other.readMeta({ stage: 'strict', key })) === null) await new Promise((resolve) => setTimeout(resolve, 10));
      const joined = await other.acquire(input(key, 'node-b'));
      expect(joined.outcome).toBe('FOLLOWER_WAIT');
      expect(settled).toBe(false);
      resumeReplica();
      const reply = await owner;
      expect(reply.outcome).toBe('OWNER_NEW');
      expect(reply.meta.epoch).toBe(joined.meta.epoch);
    });

    it("'retry': a WAIT whose reply never comes (the connection lost after the write) counts as unacknowledged, not as a failed acquire", async () => {
      const proxy = await startTcpProxy({ port: primary.port });
      try {
        const strict = adapter.coordinator(proxy.url, {
          prefix: 'strict',
          commandTimeoutMs: 500,
          waitReplicas: { replicas: 1, timeoutMs: 300, unacknowledged: 'retry', retryForMs: 60_000 },
        });
        open.push(strict);
        const other = coordinator('keep');
        expect((await strict.acquire(input(randomUUID()))).outcome).toBe('OWNER_NEW'); // connected and checked
        const key = randomUUID();
        pauseReplica();
        const owner = strict.acquire(input(key));
        // The record lands and its reply comes back; the replies from then on (the WAIT's among them) are lost.
        const waiting = async () => String(await rawCommand(primary.port, ['CLIENT', 'LIST'])).includes('cmd=wait');
        while (!(await waiting()));
        proxy.mode = 'drop-replies';
        const taken = (await other.readMeta({ stage: 'strict', key }))!;
        // Past the WAIT's deadline the owner writes its record again (a renewal lands on Redis) instead of failing.
        const renewed = (async () => {
          for (;;) {
            const meta = await other.readMeta({ stage: 'strict', key });
            if (meta && meta.heartbeatAt > taken.heartbeatAt) return 'renewed';
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
        })();
        const settled = owner.then(
          () => 'settled',
          (error: unknown) => `failed: ${String(error)}`,
        );
        expect(await Promise.race([renewed, settled])).toBe('renewed');
        proxy.mode = 'pass';
        proxy.resetAll();
        resumeReplica();
        const reply = await owner;
        expect(reply.outcome).toBe('OWNER_NEW');
        expect(reply.meta.epoch).toBe(taken.epoch);
      } finally {
        await proxy.close();
      }
    });

    it("'retry' past retryForMs: FlightReplicationError, and the run is given up", async () => {
      const strict = coordinator('retry', 300);
      const other = coordinator('keep');
      const key = randomUUID();
      pauseReplica();
      await expect(strict.acquire(input(key))).rejects.toBeInstanceOf(FlightReplicationError);
      expect((await other.acquire(input(key, 'node-b'))).outcome).toBe('OWNER_TAKEOVER');
    });

    it('a lease renewal no replica acknowledged is refused with FlightReplicationError', async () => {
      const c = coordinator('fail');
      const taking = input(randomUUID());
      const reply = await c.acquire({ ...taking, startRunning: true });
      const fence = { stage: 'strict', key: taking.key, ownerId: 'node-a', ownerToken: taking.ownerToken, epoch: reply.meta.epoch };
      pauseReplica();
      await expect(c.heartbeat(fence, LEASE)).rejects.toBeInstanceOf(FlightReplicationError);
      await expect(c.markRunning(fence, LEASE)).rejects.toBeInstanceOf(FlightReplicationError);
    });

    it("'keep' (the default): the same acquire makes an owner anyway", async () => {
      const c = coordinator('keep');
      pauseReplica();
      expect((await c.acquire(input(randomUUID()))).outcome).toBe('OWNER_NEW');
    });

    it("Redis's own min-replicas-to-write: with no replica in reach the acquire is refused (FlightCoordinationError, NOREPLICAS)", async () => {
      const c = adapter.coordinator(primary.url, { prefix: 'strict' });
      open.push(c);
      await primary.command('CONFIG', 'SET', 'min-replicas-to-write', '1', 'min-replicas-max-lag', '1');
      try {
        pauseReplica();
        // The primary counts a replica as good until its last acknowledgement is min-replicas-max-lag old.
        while (!/^min_slaves_good_slaves:0/m.test(String(await primary.command('INFO', 'replication')))) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        const error = await c.acquire(input(randomUUID())).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(FlightCoordinationError);
        expect(String((error as Error).message)).toMatch(/NOREPLICAS/);
      } finally {
        await primary.command('CONFIG', 'SET', 'min-replicas-to-write', '0');
      }
    });

    for (const mode of ['distributed', 'hybrid'] as const) {
      it(`through execute (${mode}): the supplier never runs on an unacknowledged ownership`, async () => {
        const flights = createSingleFlight({ coordinator: coordinator('fail'), mode, nodeId: 'node-a' });
        let runs = 0;
        pauseReplica();
        const error = await flights
          .execute('strict', randomUUID(), () => {
            runs++;
            return 'v';
          })
          .then(
            () => undefined,
            (e: unknown) => e,
          );
        expect(error).toBeInstanceOf(FlightReplicationError);
        expect(runs).toBe(0);
        resumeReplica();
        const later = await flights.execute('strict', randomUUID(), () => {
          runs++;
          return 'v';
        });
        expect(later.value).toBe('v');
        expect(runs).toBe(1);
        await flights.close();
      });
    }
  });
}
