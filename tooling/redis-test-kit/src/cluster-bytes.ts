/**
 * Results stored as bytes on Redis Cluster, the same test for every adapter: compressed results on flights
 * spread over every master are written as bytes and read back byte for byte (replay and readResult), each
 * through the master that holds its slot.
 */
import { randomUUID } from 'node:crypto';
import { createEnvelopeCodec } from '@flight/core';
import { expect } from 'vitest';
import { type RedisCoordinator, type RedisDriver, flightKeys } from '@flight/redis-scripts';

const LEASE = { takeoverAfterMs: 3000, leaseTtlMs: 6000, maxRunMs: 20_000 };

export async function checkClusterBytes(create: (prefix: string) => { coordinator: RedisCoordinator; driver: RedisDriver }): Promise<void> {
  const prefix = `bytesc-${randomUUID().slice(0, 8)}`;
  const writer = create(prefix);
  const reader = create(prefix);
  const codec = createEnvelopeCodec();
  try {
    expect(writer.coordinator.storesBytes).toBe(true);
    const masters = new Set<string>();
    for (let i = 0; i < 12; i++) {
      const ref = { stage: 'bytes-cluster', key: `k${i}` };
      const value = { i, text: `flight ${i} `.repeat(2000) };
      const result = codec.encode(value, { maxBytes: 1 << 24, bytes: true });
      expect(result).toBeInstanceOf(Uint8Array);
      const reply = await writer.coordinator.acquire({ ...ref, ...LEASE, ownerId: 'node-a', ownerToken: randomUUID(), startRunning: true });
      const fence = { ...ref, ownerId: 'node-a', ownerToken: reply.meta.ownerToken, epoch: reply.meta.epoch };
      expect(await writer.coordinator.complete(fence, { result, resultTtlMs: 60_000 })).toMatchObject({ ok: true });
      const replay = await reader.coordinator.acquire({ ...ref, ...LEASE, ownerId: 'node-b', ownerToken: randomUUID() });
      expect(replay.outcome).toBe('REPLAY_SUCCESS');
      expect(Buffer.from(replay.result as Uint8Array)).toEqual(Buffer.from(result as Uint8Array));
      expect(codec.decode((await reader.coordinator.readResult(ref))!, { maxBytes: 1 << 24 })).toEqual(value);
      const server = writer.driver.clockOf?.(flightKeys(prefix, ref).meta);
      if (server) masters.add(server);
    }
    expect(masters.size).toBeGreaterThan(1);
  } finally {
    await writer.coordinator.close();
    await reader.coordinator.close();
  }
}
