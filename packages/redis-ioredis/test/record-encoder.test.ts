/**
 * `encodeRecord` (@flight/redis-scripts' record.generated.ts) writes, byte for byte, the record the Lua
 * scripts store: the fast acquire (fast-acquire.ts) creates flights with it in a plain SET that scripts
 * read later. Checked against the real scripts on the shared Redis, for records they create, take over,
 * complete and fail (the coordinator here has no SET path, so every record is the scripts' own).
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { createRedisCoordinator, encodeRecord, flightKeys, RECORD_HEADER, type RedisDriver } from '@flight/redis-scripts';
import { sharedRedisUrl } from '@flight/redis-test-kit';
import { createIoredisDriver } from '../src/index.js';

const prefix = `enc-${process.pid}`;
const redis = new Redis(sharedRedisUrl());
afterAll(() => redis.disconnect());

/** Text as users pass it: ASCII, other scripts, emoji, separators the record uses. */
const text = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('', 'ключ ✓', '🙂:1:', '0:', 'a b\nc', 'x'.repeat(40)));

describe('encodeRecord', () => {
  it('writes what the scripts store: new, taken over, completed and failed records', async () => {
    let now = 1_760_000_000_000;
    const { setIfAbsent, ...scriptsOnly }: RedisDriver = createIoredisDriver({ redis: sharedRedisUrl() });
    expect(setIfAbsent).toBeTypeOf('function');
    const coordinator = createRedisCoordinator(scriptsOnly, { prefix, clock: () => now });
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.record({
            ownerId: text.filter((s) => s !== ''),
            sessionId: fc.option(text, { nil: undefined }),
            traceparent: fc.option(fc.constant('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'), { nil: undefined }),
            startRunning: fc.boolean(),
            leaseTtlMs: fc.integer({ min: 5000, max: 60_000 }), // the real-clock TTL outlives the test
            maxRunMs: fc.integer({ min: 5000, max: 600_000 }),
            result: text,
            error: text,
            end: fc.constantFrom('complete', 'fail', 'takeover'),
          }),
          async (c) => {
            now += 1000;
            const ref = { stage: 'enc', key: randomUUID() };
            const raw = async () => (await redis.get(flightKeys(prefix, ref).meta)) ?? '';
            const watchedOf = (stored: string) => stored[RECORD_HEADER.watched[0]] === '1';
            const input = { ...ref, ...c, takeoverAfterMs: 10, ownerToken: randomUUID() };
            // A new record, written by the acquire script.
            const first = await coordinator.acquire(input);
            const created = await raw();
            expect(encodeRecord(first.meta, watchedOf(created))).toBe(created);
            const fence = { ...ref, ownerId: c.ownerId, ownerToken: input.ownerToken, epoch: first.meta.epoch };
            if (c.end === 'complete') {
              if (!c.startRunning) await coordinator.markRunning(fence, input);
              const done = await coordinator.complete(fence, { result: c.result, resultTtlMs: 60_000 });
              expect(done.ok).toBe(true);
              if (done.ok) expect(encodeRecord(done.meta, false) + c.result).toBe(await raw());
            } else if (c.end === 'fail') {
              const failed = await coordinator.fail(fence, {
                failure: { type: 'PROVIDER', code: 'E_X', message: c.error, retryable: true },
                ttlMs: 60_000,
              });
              expect(failed.ok).toBe(true);
              if (failed.ok) expect(encodeRecord(failed.meta, false)).toBe(await raw());
            } else {
              now += 1000; // past takeoverAfterMs: the next caller takes the run over (takeovers 1, created kept)
              const next = await coordinator.acquire({ ...input, ownerId: 'node-b', ownerToken: randomUUID() });
              expect(next.outcome).toBe('OWNER_TAKEOVER');
              const stored = await raw();
              expect(encodeRecord(next.meta, watchedOf(stored))).toBe(stored);
            }
          },
        ),
        { numRuns: 60 },
      );
    } finally {
      await coordinator.close();
    }
  });
});
