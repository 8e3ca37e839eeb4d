import { randomUUID } from 'node:crypto';
import type { Fence, FlightRef } from '@flight/core/adapter';
import { deleteKeys, scanKeysWithoutTtl, sharedRedisUrl, startTcpProxy } from '@flight/redis-test-kit';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createIoredisCoordinator } from '../src/index.js';

const url = sharedRedisUrl();
const prefix = `flight-test-stream-notice-${randomUUID().slice(0, 8)}`;
const LEASE = { leaseTtlMs: 10_000, takeoverAfterMs: 10_000, maxRunMs: 60_000 };
const CAPS = { ttlMs: 60_000, maxChunks: 1000, maxBytes: 1_000_000 };

describe('ioredis: progress notices carry small appends', () => {
  const client = new Redis(url);
  const coordinator = createIoredisCoordinator({ client, prefix, inlineResultBytes: 64 });
  afterAll(async () => {
    await coordinator.close();
    expect(await scanKeysWithoutTtl(url, `${prefix}*`)).toEqual([]);
    await deleteKeys(url, `${prefix}*`);
    await client.quit();
  });

  async function followedRun(): Promise<{ ref: FlightRef; fence: Fence }> {
    const ref = { stage: 's', key: randomUUID() };
    const owner = await coordinator.acquire({ ...ref, ...LEASE, ownerId: 'a', ownerToken: randomUUID(), startRunning: true });
    expect((await coordinator.acquire({ ...ref, ...LEASE, ownerId: 'b', ownerToken: randomUUID() })).outcome).toBe('FOLLOWER_WAIT');
    return { ref, fence: { ...ref, ownerId: 'a', ownerToken: owner.meta.ownerToken, epoch: owner.meta.epoch } };
  }

  it('a waiting reader gets the appended entries with its wake-up, the same as a read returns, and later ones from the window', async () => {
    const { ref, fence } = await followedRun();
    const { epoch } = fence;
    // The first wait subscribes; nothing is stored yet.
    expect(await coordinator.waitForStream(ref, { epoch, afterId: '', timeoutMs: 100 })).toEqual({ entries: [] });
    const woken = coordinator.waitForStream(ref, { epoch, afterId: '', timeoutMs: 5000 });
    const chunks = ['"a b"', '"ключ ✓"', '{"x":[1," 2 "]}'];
    expect(await coordinator.appendStream(fence, { ...CAPS, chunks })).toEqual({ ok: true });
    const { entries } = await woken;
    expect(entries).toEqual((await coordinator.readStream(ref, { epoch, afterId: '', count: 10 })).entries);
    expect(entries.map((e) => e.chunk)).toEqual(chunks);
    // Another wait after an id the window holds: the entries after it, at once.
    expect((await coordinator.waitForStream(ref, { epoch, afterId: entries[0]!.id, timeoutMs: 5000 })).entries).toEqual(entries.slice(1));
    // Next append continues the window.
    const next = coordinator.waitForStream(ref, { epoch, afterId: entries[2]!.id, timeoutMs: 5000 });
    await coordinator.appendStream(fence, { ...CAPS, chunks: ['"d"'] });
    expect((await next).entries.map((e) => e.chunk)).toEqual(['"d"']);
  });

  it('an append whose notice came before the subscription took effect: the read that follows it fills the window, so a later wait after an id it holds ends at once', async () => {
    // The waiting process reaches Redis through a proxy that can hold its bytes (a loaded machine or network
    // delaying its SUBSCRIBE), the owner directly.
    const proxy = await startTcpProxy({ port: Number(new URL(url).port) });
    const client = new Redis(proxy.url);
    client.on('error', () => undefined);
    const waiter = createIoredisCoordinator({ client, prefix, inlineResultBytes: 64 });
    try {
      const { ref, fence } = await followedRun();
      const { epoch } = fence;
      expect(await client.ping()).toBe('PONG');
      proxy.mode = 'hold';
      // A first wait ends by its timeout before its subscription is confirmed; the channel stays listened to.
      expect(await waiter.waitForStream(ref, { epoch, afterId: '', timeoutMs: 50 })).toEqual({ entries: [] });
      const woken = waiter.waitForStream(ref, { epoch, afterId: '', timeoutMs: 30_000 });
      const chunks = ['"a"', '"b"', '"c"'];
      // Published while the waiter's subscription is still held: the waiter never hears this notice.
      expect(await coordinator.appendStream(fence, { ...CAPS, chunks })).toEqual({ ok: true });
      proxy.mode = 'pass';
      // The subscription takes effect; the read that follows finds the entries.
      const { entries } = await woken;
      expect(entries.map((e) => e.chunk)).toEqual(chunks);
      // Another wait after an id that read returned: the entries after it, at once (not at the wait's timeout).
      const again = await waiter.waitForStream(ref, { epoch, afterId: entries[0]!.id, timeoutMs: 30_000 });
      expect(again.entries).toEqual(entries.slice(1));
    } finally {
      await waiter.close();
      client.disconnect();
      await proxy.close();
    }
  }, 60_000);

  it('an append past inlineResultBytes wakes the reader without its entries (the reader reads them)', async () => {
    const { ref, fence } = await followedRun();
    const { epoch } = fence;
    await coordinator.waitForStream(ref, { epoch, afterId: '', timeoutMs: 50 });
    // A wait far longer than the test may take: only the append's wake-up can end it.
    const woken = coordinator.waitForStream(ref, { epoch, afterId: '', timeoutMs: 3_600_000 });
    await coordinator.appendStream(fence, { ...CAPS, chunks: [`"${'x'.repeat(100)}"`] });
    expect(await woken).toEqual({ entries: [] });
  });
});
