/**
 * A wrong or missing connection fails when the coordinator or lock is created (`FlightConfigurationError`,
 * naming the option and the fix), never at first use, never as a silent connection to 127.0.0.1:6379, and
 * never, in hybrid mode, as a silent in-process fallback.
 */
import { createSingleFlight, FlightConfigurationError } from '@flight/core';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { afterAll, describe, expect, it } from 'vitest';
import { createIoredisCoordinator, createIoredisSessionLock } from '../src/index.js';

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

describe('createIoredisCoordinator refuses a wrong or missing connection at creation', () => {
  it('no options, or no connection in them (it connected to 127.0.0.1:6379 silently)', () => {
    expect(refused(() => (createIoredisCoordinator as (o?: unknown) => unknown)()).message).toMatch(/needs options: pass \{ client \}/);
    expect(refused(() => createIoredisCoordinator({} as never)).message).toMatch(/no connection given .*127\.0\.0\.1:6379/);
    expect(refused(() => createIoredisSessionLock({} as never)).context.option).toBe('client');
  });

  it('a URL where the client goes, with where a URL goes', () => {
    expect(refused(() => createIoredisCoordinator({ client: url as never })).message).toContain(
      "a URL goes in redis: { redis: 'redis://…' }",
    );
  });

  it("the other library's client, with the adapter to use", () => {
    const nodeRedis = createClient({ url });
    expect(refused(() => createIoredisCoordinator({ client: nodeRedis as never })).message).toContain(
      'use createNodeRedisCoordinator from @flight/redis-node',
    );
    // In hybrid mode it never gets as far as a silent in-process run: creation itself fails.
    expect(() => createSingleFlight({ mode: 'hybrid', coordinator: createIoredisCoordinator({ client: nodeRedis as never }) })).toThrow(
      FlightConfigurationError,
    );
  });

  it('an option typo, and client and redis both', () => {
    expect(refused(() => createIoredisCoordinator({ client: ioredis, commandTimeout: 100 } as never)).message).toContain(
      'unknown option "commandTimeout" (did you mean "commandTimeoutMs"?)',
    );
    expect(refused(() => createIoredisCoordinator({ client: ioredis, redis: url } as never)).message).toContain('not both');
  });

  it('accepts a client, a URL or options in redis', async () => {
    for (const coordinator of [createIoredisCoordinator({ client: ioredis }), createIoredisCoordinator({ redis: url })]) {
      await coordinator.close();
    }
  });
});
