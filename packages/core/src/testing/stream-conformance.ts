/**
 * Conformance cases of the streaming extension (`FlightStreamCoordinator`), registered by
 * `registerCoordinatorConformance` for every coordinator that implements it.
 */
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import type { FlightCoordinator } from '../ports/coordinator.js';
import { supportsStreams, type StreamAppendInput, type StreamingFlightCoordinator } from '../ports/stream-coordinator.js';
import type { AcquireInput, Fence, FlightRef, LeaseTerms } from '../state/types.js';

export interface StreamConformanceContext {
  coordinator: () => FlightCoordinator;
  ref: () => FlightRef;
  advance: (ms: number) => void;
  lease: LeaseTerms;
}

const CAPS = { ttlMs: 60_000, maxChunks: 100, maxBytes: 10_000 };

export function registerStreamConformance(ctx: StreamConformanceContext): void {
  const streaming = (): StreamingFlightCoordinator | undefined => {
    const c = ctx.coordinator();
    return supportsStreams(c) ? c : undefined;
  };
  async function runningOwner(
    c: StreamingFlightCoordinator,
    r: FlightRef,
    ownerId: string,
    extra: Partial<AcquireInput> = {},
  ): Promise<Fence> {
    const reply = await c.acquire({ ...r, ...ctx.lease, ownerId, ownerToken: randomUUID(), startRunning: true, ...extra });
    expect(['OWNER_NEW', 'OWNER_TAKEOVER']).toContain(reply.outcome);
    return { ...r, ownerId, ownerToken: reply.meta.ownerToken, epoch: reply.meta.epoch };
  }
  const append = (c: StreamingFlightCoordinator, fence: Fence, chunks: string[], caps: Partial<StreamAppendInput> = {}) =>
    c.appendStream(fence, { ...CAPS, ...caps, chunks });
  /** A case on a fresh flight whose run is owned by node-a (skipped for a coordinator without streams). */
  const streamCase = (name: string, body: (c: StreamingFlightCoordinator, r: FlightRef, fence: Fence) => Promise<void>) =>
    it(`streams: ${name}`, async () => {
      const c = streaming();
      if (!c) return;
      const r = ctx.ref();
      await body(c, r, await runningOwner(c, r, 'node-a'));
    });
  const chunksOf = async (c: StreamingFlightCoordinator, r: FlightRef, epoch: number, afterId = '', count = 1000) =>
    (await c.readStream(r, { epoch, afterId, count })).entries.map((e) => e.chunk);

  streamCase('the owner appends chunks; readers read them in order, from the first or after any id, in pages', async (c, r, fence) => {
    expect(await chunksOf(c, r, fence.epoch)).toEqual([]);
    expect(await append(c, fence, ['"a"', '"b"'])).toEqual({ ok: true });
    expect(await append(c, fence, ['"c"'])).toEqual({ ok: true });
    expect(await append(c, fence, ['{"x":[1, "two"]}', 'ключ ✓ \n'])).toEqual({ ok: true });
    const all = await c.readStream(r, { epoch: fence.epoch, afterId: '', count: 1000 });
    expect(all.entries.map((e) => e.chunk)).toEqual(['"a"', '"b"', '"c"', '{"x":[1, "two"]}', 'ключ ✓ \n']);
    expect(all.meta).toMatchObject({ status: 'RUNNING', epoch: fence.epoch });
    expect(await chunksOf(c, r, fence.epoch, all.entries[1]!.id)).toEqual(['"c"', '{"x":[1, "two"]}', 'ключ ✓ \n']);
    expect(await chunksOf(c, r, fence.epoch, all.entries[1]!.id, 2)).toEqual(['"c"', '{"x":[1, "two"]}']);
    expect(await chunksOf(c, r, fence.epoch, all.entries[4]!.id)).toEqual([]);
  });

  streamCase("a stale owner's append is refused (FENCED) after a takeover, and the new run's stream starts empty", async (c, r, stale) => {
    expect(await append(c, stale, ['"1"', '"2"'])).toEqual({ ok: true });
    expect(await append(c, { ...stale, ownerToken: 'not-the-owner' }, ['"x"'])).toEqual({ ok: false, code: 'FENCED' });
    ctx.advance(ctx.lease.takeoverAfterMs + 1);
    const fresh = await runningOwner(c, r, 'node-b');
    expect(fresh.epoch).toBeGreaterThan(stale.epoch);
    expect(await append(c, stale, ['"3"'])).toEqual({ ok: false, code: 'FENCED' });
    expect(await chunksOf(c, r, stale.epoch)).toEqual(['"1"', '"2"']);
    expect(await chunksOf(c, r, fresh.epoch)).toEqual([]);
    expect(await append(c, fresh, ['"new"'])).toEqual({ ok: true });
    expect(await chunksOf(c, r, fresh.epoch)).toEqual(['"new"']);
    // A completed run takes no more chunks.
    expect((await c.complete(fresh, { result: '[]', resultTtlMs: 60_000 })).ok).toBe(true);
    expect(await append(c, fresh, ['"late"'])).toEqual({ ok: false, code: 'FENCED' });
  });

  streamCase('an append sent again (a client repeating it after a reconnect) writes nothing twice (POSITION)', async (c, r, fence) => {
    expect(await append(c, fence, ['"a"', '"b"'], { from: 0 })).toEqual({ ok: true });
    expect(await append(c, fence, ['"c"'], { from: 2 })).toEqual({ ok: true });
    // The same append again, and one that skips entries: nothing written.
    expect(await append(c, fence, ['"c"'], { from: 2 })).toEqual({ ok: false, code: 'POSITION' });
    expect(await append(c, fence, ['"e"'], { from: 4 })).toEqual({ ok: false, code: 'POSITION' });
    expect(await append(c, fence, ['"d"'], { from: 3 })).toEqual({ ok: true });
    expect(await chunksOf(c, r, fence.epoch)).toEqual(['"a"', '"b"', '"c"', '"d"']);
  });

  streamCase('an append past the caps on chunks or bytes is refused (LIMIT) and writes nothing', async (c, r, fence) => {
    expect(await append(c, fence, ['"1"', '"2"'], { maxChunks: 3 })).toEqual({ ok: true });
    expect(await append(c, fence, ['"3"', '"4"'], { maxChunks: 3 })).toEqual({ ok: false, code: 'LIMIT' });
    expect(await append(c, fence, ['"3"'], { maxChunks: 3 })).toEqual({ ok: true });
    expect(await append(c, fence, ['x'.repeat(10)], { maxBytes: 18 })).toEqual({ ok: false, code: 'LIMIT' });
    expect(await append(c, fence, ['x'.repeat(9)], { maxBytes: 18 })).toEqual({ ok: true });
    expect(await chunksOf(c, r, fence.epoch)).toEqual(['"1"', '"2"', '"3"', 'x'.repeat(9)]);
  });

  streamCase('the run of a forgotten flight is answered FORGOTTEN', async (c, r, fence) => {
    expect((await c.forget(r)).ok).toBe(true);
    expect(await append(c, fence, ['"a"'])).toEqual({ ok: false, code: 'FORGOTTEN' });
  });

  streamCase('waitForStream wakes on an append, at once when unread entries exist, else on timeout or abort', async (c, r, fence) => {
    // A follower joined the run (so progress notices are published).
    expect((await c.acquire({ ...r, ...ctx.lease, ownerId: 'node-b', ownerToken: randomUUID() })).outcome).toBe('FOLLOWER_WAIT');
    let started = Date.now();
    await c.waitForStream(r, { epoch: fence.epoch, afterId: '', timeoutMs: 150 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(100);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    started = Date.now();
    await c.waitForStream(r, { epoch: fence.epoch, afterId: '', timeoutMs: 5000, signal: controller.signal });
    expect(Date.now() - started).toBeLessThan(2000);
    started = Date.now();
    const woken = c.waitForStream(r, { epoch: fence.epoch, afterId: '', timeoutMs: 5000 });
    setTimeout(() => void append(c, fence, ['"a"']), 100);
    const brought = (await woken).entries;
    expect(Date.now() - started).toBeLessThan(2000);
    const [first] = (await c.readStream(r, { epoch: fence.epoch, afterId: '', count: 10 })).entries;
    // Entries a wake-up brings are exactly the run's next ones (an adapter may bring none).
    if (brought.length > 0) expect(brought).toEqual([first]);
    started = Date.now();
    await c.waitForStream(r, { epoch: fence.epoch, afterId: '', timeoutMs: 5000 });
    expect(Date.now() - started).toBeLessThan(2000);
    // Nothing after the last id: waits again, until the next append.
    started = Date.now();
    const next = c.waitForStream(r, { epoch: fence.epoch, afterId: first!.id, timeoutMs: 5000 });
    setTimeout(() => void append(c, fence, ['"b"']), 100);
    await next;
    expect(Date.now() - started).toBeGreaterThanOrEqual(80);
    expect(Date.now() - started).toBeLessThan(2000);
  });
}
