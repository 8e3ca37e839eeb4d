/**
 * Through Sentinels, after a failover the old primary still takes writes until the Sentinels turn it into a
 * replica (up to 10 s later). A connection that reaches it after the switch was announced — it was connecting
 * when the news came, or asked a Sentinel that had not heard yet — would make its process the owner of a
 * flight another process owns on the promoted primary. The coordinator moves such a connection to the promoted
 * primary before it sends a flight command, and follows a later switch back to the old address at once.
 */
import { randomUUID } from 'node:crypto';
import { replicaInSync, startSentinelTopology, startTcpProxy, WAIT_FOR_EFFECT } from '@flight/redis-test-kit';
import { Redis } from 'ioredis';
import { describe, expect, it, vi } from 'vitest';
import { createIoredisCoordinator } from '../src/index.js';

const LEASE = { leaseTtlMs: 30_000, takeoverAfterMs: 30_000, maxRunMs: 60_000 };
const acquire = (coordinator: ReturnType<typeof createIoredisCoordinator>, key: string, ownerId: string) =>
  coordinator.acquire({ stage: 's', key, ...LEASE, ownerId, ownerToken: randomUUID(), startRunning: true });
/** The port the client's socket goes to. */
const remotePort = (client: Redis) => (client as unknown as { stream?: { remotePort?: number } }).stream?.remotePort;

describe('ioredis through Sentinels: a connection that reaches the replaced primary after the switch', () => {
  it('is moved to the promoted primary before its first flight command: one owner across processes', async () => {
    const topology = await startSentinelTopology({ downAfterMs: 3000 });
    const [oldPrimary, promoted] = [await topology.primaryPort(), await topology.replicaPort()];
    // The late client reaches each data node through a proxy of its own, so the test can hold its way to
    // the old primary.
    const toOld = await startTcpProxy({ port: oldPrimary });
    const toPromoted = await startTcpProxy({ port: promoted });
    const natMap = {
      [`127.0.0.1:${oldPrimary}`]: { host: '127.0.0.1', port: toOld.port },
      [`127.0.0.1:${promoted}`]: { host: '127.0.0.1', port: toPromoted.port },
    };
    const client = new Redis({ sentinels: topology.sentinels, name: topology.name, natMap });
    client.on('error', () => undefined);
    const prefix = `flight-test-switch-${randomUUID().slice(0, 8)}`;
    const late = createIoredisCoordinator({ client, prefix });
    let fresh: ReturnType<typeof createIoredisCoordinator> | undefined;
    try {
      expect(await client.ping()).toBe('PONG');
      // The connection drops and comes back to the old primary, which is still the primary: connected, its
      // ready check held on the way, while the Sentinels switch.
      toOld.mode = 'hold';
      toOld.resetAll();
      await vi.waitFor(() => expect(client.status).toBe('connect'), WAIT_FOR_EFFECT);
      expect(await topology.failover()).toBe(promoted);
      toOld.mode = 'pass';

      fresh = createIoredisCoordinator({ redis: { sentinels: topology.sentinels, name: topology.name }, prefix });
      const key = randomUUID();
      const [fromLate, fromFresh] = [await acquire(late, key, 'late'), await acquire(fresh, key, 'fresh')];
      expect([fromLate.outcome, fromFresh.outcome]).toEqual(['OWNER_NEW', 'FOLLOWER_WAIT']);
      expect(remotePort(client)).toBe(toPromoted.port);
    } finally {
      await late.close();
      await fresh?.close();
      client.disconnect();
      await Promise.all([toOld.close(), toPromoted.close()]);
      await topology.stop();
    }
  }, 120_000);

  it('follows a later switch back to the old address at once: a flight command is answered there within its deadline', async () => {
    const topology = await startSentinelTopology({ downAfterMs: 3000 });
    const client = new Redis({ sentinels: topology.sentinels, name: topology.name });
    client.on('error', () => undefined);
    // Far shorter than the time the old address is kept away from after a switch (30 s).
    const coordinator = createIoredisCoordinator({
      client,
      prefix: `flight-test-switch-${randomUUID().slice(0, 8)}`,
      commandTimeoutMs: 5000,
    });
    try {
      const first = await topology.primaryPort();
      expect(await client.ping()).toBe('PONG');
      await topology.failover();
      // The Sentinels turn the old primary into a replica of the promoted one; then it is promoted back.
      await replicaInSync(first);
      expect(await topology.failover()).toBe(first);
      await vi.waitFor(() => expect([client.status, remotePort(client)]).toEqual(['ready', first]), WAIT_FOR_EFFECT);
      expect((await acquire(coordinator, randomUUID(), 'a')).outcome).toBe('OWNER_NEW');
      expect(remotePort(client)).toBe(first);
    } finally {
      await coordinator.close();
      client.disconnect();
      await topology.stop();
    }
  }, 120_000);

  it('reads no answer the old primary sends after the drop: a command running there through the switch is answered by the promoted one', async () => {
    // A long down-after: the old primary is busy for seconds and must not be failed over for it.
    const topology = await startSentinelTopology({ downAfterMs: 10_000 });
    const client = new Redis({ sentinels: topology.sentinels, name: topology.name });
    client.on('error', () => undefined);
    const coordinator = createIoredisCoordinator({ client, prefix: `flight-test-switch-${randomUUID().slice(0, 8)}` });
    try {
      const old = await topology.primaryPort();
      expect(await client.ping()).toBe('PONG');
      // Busy for 4 s (longer than the failover takes), then answers with the port of the server it ran on.
      const busy = client.call(
        'EVAL',
        "local function now() local t = redis.call('TIME'); return t[1] * 1000000 + t[2] end " +
          "local stop = now() + 4000000; repeat until now() >= stop; return string.match(redis.call('INFO', 'server'), 'tcp_port:(%d+)')",
        0,
      );
      const promoted = await topology.failover();
      expect(promoted).not.toBe(old);
      // The switch came while the old primary was still busy with the command: its answer, sent after the
      // drop, is not read; the command is sent again to the promoted primary, which answers it.
      expect(Number(await busy)).toBe(promoted);
      expect(remotePort(client)).toBe(promoted);
    } finally {
      await coordinator.close();
      client.disconnect();
      await topology.stop();
    }
  }, 120_000);
});
