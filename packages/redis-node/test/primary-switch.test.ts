/**
 * node-redis follows the notices of one Sentinel. When another Sentinel leads a failover, the one it follows
 * hears of it up to a hello period later, and until then the client stays on the old primary, which still
 * takes writes: a process there could own a flight another process owns on the promoted primary. The
 * coordinator listens to every Sentinel and holds its commands while the client is on the replaced primary.
 * Here the Sentinel the client follows is stopped through the failover, so the client stays on the old
 * primary until it is resumed.
 */
import { randomUUID } from 'node:crypto';
import { flightKeys } from '@flight/redis-scripts';
import { infoField, rawCommand, startSentinelTopology, WAIT_FOR_EFFECT } from '@flight/redis-test-kit';
import { createSentinel } from 'redis';
import { describe, expect, it, vi } from 'vitest';
import { createNodeRedisCoordinator } from '../src/index.js';

const LEASE = { leaseTtlMs: 30_000, takeoverAfterMs: 30_000, maxRunMs: 60_000 };

describe('node-redis through Sentinels: a failover led by a Sentinel the client does not follow', () => {
  it('holds flight commands while the client is on the replaced primary, then sends them to the promoted one', async () => {
    const topology = await startSentinelTopology({ downAfterMs: 3000 });
    const client = createSentinel({ name: topology.name, sentinelRootNodes: topology.sentinels });
    client.on('error', () => undefined);
    await client.connect();
    const prefix = `flight-test-switch-${randomUUID().slice(0, 8)}`;
    const coordinator = createNodeRedisCoordinator({ client, prefix, commandTimeoutMs: 1000 });
    // A second coordinator on the same client, closed while one of its commands is held.
    const closing = createNodeRedisCoordinator({ client, prefix, commandTimeoutMs: 30_000 });
    let stopped: number | undefined;
    try {
      const acquire = (key: string, by = coordinator) =>
        by.acquire({ stage: 's', key, ...LEASE, ownerId: 'a', ownerToken: randomUUID(), startRunning: true });
      const old = await topology.primaryPort();
      const followed = client.getSentinelNode()!.port;
      const leader = topology.sentinels.find((s) => s.port !== followed)!.port;
      // The coordinator listens to every Sentinel before the failover.
      for (const { port } of topology.sentinels) {
        await vi.waitFor(
          async () => expect(String(await rawCommand(port, ['CLIENT', 'LIST'])).match(/ sub=1 /g)).toHaveLength(2),
          WAIT_FOR_EFFECT,
        );
      }
      expect((await acquire(randomUUID())).outcome).toBe('OWNER_NEW');

      stopped = Number(infoField(await rawCommand(followed, ['INFO', 'server']), 'process_id'));
      process.kill(stopped, 'SIGSTOP');
      await rawCommand(leader, ['SENTINEL', 'FAILOVER', topology.name]);
      let promoted = old;
      await vi.waitFor(async () => {
        promoted = Number(((await rawCommand(leader, ['SENTINEL', 'GET-MASTER-ADDR-BY-NAME', topology.name])) as string[])[1]);
        expect(promoted).not.toBe(old);
      }, WAIT_FOR_EFFECT);
      // The client is still on the old primary, and the old primary still takes writes: the coordinator's
      // commands wait, and are refused by their deadline.
      await vi.waitFor(() => expect(acquire(randomUUID())).rejects.toMatchObject({ code: 'E_FLIGHT_COORDINATION' }), WAIT_FOR_EFFECT);
      expect(client.getMasterNode()?.port).toBe(old);
      expect(infoField(await rawCommand(old, ['INFO', 'replication']), 'role')).toBe('master');
      // A command held when its coordinator closes is refused, and never sent to the old primary.
      const heldKey = randomUUID();
      const held = acquire(heldKey, closing);
      await closing.close();
      await expect(held).rejects.toMatchObject({ code: 'E_FLIGHT_COORDINATION' });
      expect(await rawCommand(old, ['EXISTS', flightKeys(prefix, { stage: 's', key: heldKey }).meta])).toBe(0);

      process.kill(stopped, 'SIGCONT');
      stopped = undefined;
      await vi.waitFor(() => expect(client.getMasterNode()?.port).toBe(promoted), { ...WAIT_FOR_EFFECT, timeout: 30_000 });
      const key = randomUUID();
      expect((await acquire(key)).outcome).toBe('OWNER_NEW');
      expect(await rawCommand(promoted, ['EXISTS', flightKeys(prefix, { stage: 's', key }).meta])).toBe(1);
    } finally {
      if (stopped !== undefined) process.kill(stopped, 'SIGCONT');
      await coordinator.close();
      await closing.close();
      await client.close();
      await topology.stop();
    }
  }, 120_000);
});
