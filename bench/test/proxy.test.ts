import { setTimeout as sleep } from 'node:timers/promises';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyNotices, startCountingProxy, type CountingProxy } from '../src/proxy.js';

const url = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const channel = `fbtest:${randomBytes(4).toString('hex')}`;

async function until(check: () => boolean, timeoutMs = 2000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check() && Date.now() < end) await sleep(5);
}

describe('counting proxy: subscriber traffic (the fan-out scenario reads it)', () => {
  let proxy: CountingProxy;
  let publisher: Redis;
  beforeAll(async () => {
    proxy = await startCountingProxy({ host: url.hostname, port: Number(url.port || 6379) }, { observeSubscribers: true });
    publisher = new Redis(url.toString());
  });
  afterAll(async () => {
    publisher.disconnect();
    await proxy.close();
  });

  it('records the messages pushed to subscriber connections of ioredis and node-redis, nothing of command connections, and the hash tags sent', async () => {
    // ioredis: SUBSCRIBE queued before the connection is up (a SUBSCRIBE sent between `connect` and
    // `ready` makes ioredis's own ready check fail in subscriber mode).
    const io = new Redis(proxy.url);
    await io.subscribe(`${channel}:a`);
    const node = createClient({ url: proxy.url });
    await node.connect();
    const commands = new Redis(proxy.url);
    try {
      await node.subscribe(`${channel}:b`, () => {});
      await commands.set(`${channel}:key`, 'x'.repeat(1000), 'PX', 10_000);
      await commands.get(`${channel}:key`);
      await commands.get(`${channel}:{own-tag}:meta`);
      await publisher.publish(`${channel}:a`, 'one');
      await publisher.publish(`${channel}:b`, 'two two');
      await publisher.publish(`${channel}:c`, 'nobody listens');
      await until(() => proxy.subscriberTraffic().messages.length >= 2);
      const traffic = proxy.subscriberTraffic();
      expect(traffic.messages).toEqual(
        expect.arrayContaining([
          { channel: `${channel}:a`, payload: 'one' },
          { channel: `${channel}:b`, payload: 'two two' },
        ]),
      );
      expect(traffic.messages).toHaveLength(2);
      // The hash tags of the keys the clients named: how a fan-out process knows its own flights.
      expect([...traffic.tags]).toEqual(['own-tag']);
      // The subscribe confirmations and the two messages, not the 1,000-byte GET reply.
      expect(traffic.bytes).toBeGreaterThan(50);
      expect(traffic.bytes).toBeLessThan(1000);
    } finally {
      io.disconnect();
      commands.disconnect();
      await node.close().catch(() => {});
    }
  });
});

describe('counting proxy: commands written behind a subscription', () => {
  it('counts a command sent in the same write right behind a SSUBSCRIBE apart from the round trips, and the same command sent alone as one', async () => {
    const proxy = await startCountingProxy({ host: url.hostname, port: Number(url.port || 6379) });
    // A RESP3 node-redis subscriber: the PING goes in the same write as the SSUBSCRIBE before it.
    const node = createClient({ url: proxy.url, RESP: 3 });
    await node.connect();
    try {
      proxy.reset();
      await Promise.all([node.sSubscribe(`${channel}:{s}`, () => {}), node.ping()]);
      await node.ping();
      expect(proxy.byCommand()).toEqual({ ssubscribe: 1, 'ping behind ssubscribe': 1, ping: 1 });
    } finally {
      await node.close().catch(() => {});
      await proxy.close();
    }
  });
});

describe('classifyNotices', () => {
  it('a notice is foreign unless its channel (a channel per flight) or payload (a shared channel) names an own flight', () => {
    const shared = [
      { channel: 'p:events', payload: 'aaa 1 SUCCEEDED' },
      { channel: 'p:events', payload: 'bbb 1 SUCCEEDED' },
    ];
    expect(classifyNotices(shared, ['aaa'])).toEqual({ own: 1, foreign: 1 });
    const perFlight = [{ channel: 'p:{aaa}:n', payload: '1 SUCCEEDED' }];
    expect(classifyNotices(perFlight, new Set(['aaa']))).toEqual({ own: 1, foreign: 0 });
    expect(classifyNotices(perFlight, [])).toEqual({ own: 0, foreign: 1 });
  });
});
