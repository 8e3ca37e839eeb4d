/**
 * A wrong or missing connection fails when the coordinator or lock is created (`FlightConfigurationError`,
 * naming the option and the fix), never at first use, never as a silent connection to 127.0.0.1:6379, and
 * never, in hybrid mode, as a silent in-process fallback.
 */
import { createSingleFlight, FlightConfigurationError } from '@flight/core';
import { Redis } from 'ioredis';
import { createClient, createSentinel } from 'redis';
import { afterAll, describe, expect, it } from 'vitest';
import { createNodeRedisCoordinator, createNodeRedisSessionLock } from '../src/index.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const ioredis = new Redis(url, { lazyConnect: true });
afterAll(() => ioredis.disconnect());

function refused(create: () => unknown): FlightConfigurationError {
  try {
    create();
  } catch (error) {
    expect(error).toBeInstanceOf(FlightConfigurationError);
    expect((error as FlightConfigurationError).code).toBe('E_FLIGHT_CONFIGURATION');
    return error as FlightConfigurationError;
  }
  throw new Error('accepted');
}

describe('createNodeRedisCoordinator refuses a wrong or missing connection at creation', () => {
  it('no options, or no connection in them', () => {
    expect(refused(() => (createNodeRedisCoordinator as (o?: unknown) => unknown)()).message).toMatch(/needs options/);
    expect(refused(() => createNodeRedisCoordinator({} as never)).message).toMatch(/no connection given/);
    expect(refused(() => createNodeRedisSessionLock({} as never)).context.option).toBe('client');
  });

  it("a URL where the client goes, and the other library's client", () => {
    expect(refused(() => createNodeRedisCoordinator({ client: url as never })).message).toContain(
      "a URL goes in redis: { redis: { url: '…' } }",
    );
    expect(refused(() => createNodeRedisCoordinator({ client: ioredis as never })).message).toContain(
      'use createIoredisCoordinator from @flight/redis-ioredis',
    );
  });

  it('a client never connected (it ran in-process silently in hybrid mode), until it is', async () => {
    const client = createClient({ url });
    const error = refused(() => createNodeRedisCoordinator({ client }));
    expect(error.message).toContain('await client.connect()');
    expect(() => createSingleFlight({ mode: 'hybrid', coordinator: createNodeRedisCoordinator({ client }) })).toThrow(
      FlightConfigurationError,
    );
    await client.connect();
    try {
      const coordinator = createNodeRedisCoordinator({ client });
      const sf = createSingleFlight({ mode: 'hybrid', coordinator, telemetry: false });
      expect(await sf.execute('config-test', `k-${Date.now()}`, () => 'ran')).toMatchObject({ value: 'ran', role: 'owner' });
      await coordinator.close();
    } finally {
      await client.close();
    }
  });

  it("a client with neither duplicate() nor a Sentinel client's getMasterNode(); a createSentinel client is taken as it is", () => {
    const notAClient = { sendCommand: () => undefined, sSubscribe: () => undefined, on: () => undefined };
    expect(refused(() => createNodeRedisCoordinator({ client: notAClient as never })).message).toMatch(/it has no duplicate/);
    // Not connected: refused for that reason only (the connected one is tested in sentinel.test.ts).
    const sentinel = createSentinel({ name: 'mymaster', sentinelRootNodes: [{ host: '127.0.0.1', port: 1 }] });
    expect(refused(() => createNodeRedisCoordinator({ client: sentinel })).message).toContain('await client.connect()');
  });

  it('an option typo', () => {
    expect(refused(() => createNodeRedisCoordinator({ redis: { url }, prefx: 'x' } as never)).context).toMatchObject({
      option: 'prefx',
      fix: 'prefix',
    });
  });
});
