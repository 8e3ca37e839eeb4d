/**
 * ioredis sends a command again after a reconnect when its reply had not come (`autoResendUnfulfilledCommands`,
 * on by default). A stream append whose reply was lost lands twice then, unless the append says where it
 * starts (`from`): the second one writes nothing, and followers never read a chunk twice.
 */
import { randomUUID } from 'node:crypto';
import { deleteKeys, sharedRedisUrl, startTcpProxy } from '@flight/redis-test-kit';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createIoredisCoordinator } from '../src/index.js';

const url = sharedRedisUrl();
const prefix = `flight-test-append-resend-${randomUUID().slice(0, 8)}`;
const LEASE = { leaseTtlMs: 10_000, takeoverAfterMs: 10_000, maxRunMs: 60_000 };
const CAPS = { ttlMs: 60_000, maxChunks: 1000, maxBytes: 1_000_000 };

describe('ioredis: an append sent again after a reconnect', () => {
  afterAll(() => deleteKeys(url, `${prefix}*`));

  it('writes nothing twice: the stream holds each chunk once', async () => {
    const proxy = await startTcpProxy({ port: Number(new URL(url).port) });
    const client = new Redis(proxy.url);
    client.on('error', () => undefined);
    const coordinator = createIoredisCoordinator({ client, prefix, commandTimeoutMs: 300 });
    const reader = createIoredisCoordinator({ redis: url, prefix });
    try {
      const ref = { stage: 's', key: randomUUID() };
      const owner = await coordinator.acquire({ ...ref, ...LEASE, ownerId: 'a', ownerToken: randomUUID(), startRunning: true });
      const fence = { ...ref, ownerId: 'a', ownerToken: owner.meta.ownerToken, epoch: owner.meta.epoch };
      const chunks = async () =>
        (await reader.readStream(ref, { epoch: fence.epoch, afterId: '', count: 100 })).entries.map((e) => e.chunk);
      expect(await coordinator.appendStream(fence, { ...CAPS, chunks: ['"a"', '"b"'], from: 0 })).toEqual({ ok: true });
      // The next append lands, and its reply is lost on the way back.
      proxy.mode = 'drop-replies';
      const lost = coordinator.appendStream(fence, { ...CAPS, chunks: ['"c"'], from: 2 }).catch((error: unknown) => error);
      while ((await chunks()).length < 3);
      expect(await lost).toMatchObject({ code: 'E_FLIGHT_COORDINATION' });
      // The connection drops; ioredis reconnects and sends the unanswered append again, ahead of the PING.
      proxy.mode = 'pass';
      proxy.resetAll();
      expect(await client.ping()).toBe('PONG');
      expect(await chunks()).toEqual(['"a"', '"b"', '"c"']);
    } finally {
      await coordinator.close();
      await reader.close();
      client.disconnect();
      await proxy.close();
    }
  });
});
