/**
 * The ioredis driver corks its connection for one turn of the event loop: flight commands sent from
 * separate callbacks of one turn (an HTTP server's requests, each handled in a callback of its own) leave
 * in one socket write instead of one write each.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { sharedRedisUrl } from '@flight/redis-test-kit';
import { createIoredisCoordinator } from '../src/index.js';

const client = new Redis(sharedRedisUrl());
afterAll(() => client.disconnect());

/** Counts the writes the socket hands to the operating system (`_write` for one chunk, `_writev` for several). */
function countWrites(stream: { _write: (...args: any[]) => void; _writev?: (...args: any[]) => void }) {
  const counts = { writes: 0, chunks: 0 };
  const write = stream._write.bind(stream);
  const writev = stream._writev!.bind(stream);
  stream._write = (...args: any[]) => {
    counts.writes++;
    counts.chunks++;
    write(...args);
  };
  stream._writev = (chunks: unknown[], ...rest: any[]) => {
    counts.writes++;
    counts.chunks += chunks.length;
    writev(chunks, ...rest);
  };
  return counts;
}

describe('ioredis driver: write batching', () => {
  it('sends the acquires of 8 callbacks of one event-loop turn in one socket write', async () => {
    await client.ping();
    const coordinator = createIoredisCoordinator({ client, prefix: `batch-${randomUUID()}` });
    const lease = { takeoverAfterMs: 5000, leaseTtlMs: 10_000, maxRunMs: 10_000 };
    // The first acquire learns the server clock (the fast path needs it); the ones measured then take it.
    const input = (key: string) => ({ stage: 's', key, ...lease, ownerId: 'node-a', ownerToken: randomUUID(), startRunning: true });
    await coordinator.acquire(input('warm'));
    const stream = (client as unknown as { stream: Parameters<typeof countWrites>[0] }).stream;
    const counts = countWrites(stream);
    // Immediates queued together run as separate callbacks of one check phase (ticks and microtasks in
    // between); an immediate queued by one of them runs in the next turn. Timers would not do: under load, 8
    // timers set in a row may straddle a millisecond and fire in two turns.
    const replies = await Promise.all(
      Array.from({ length: 8 }, (_, i) => new Promise((resolve) => setImmediate(() => resolve(coordinator.acquire(input(`k${i}`)))))),
    );
    expect(replies.map((r) => (r as { outcome: string }).outcome)).toEqual(Array(8).fill('OWNER_NEW'));
    expect(counts.chunks).toBe(8);
    expect(counts.writes).toBe(1);
    await coordinator.close();
  });
});
