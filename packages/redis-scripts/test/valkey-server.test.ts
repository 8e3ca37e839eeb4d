import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startValkeyServer, type RedisServer } from '@flight/test-servers';

describe('valkey-server for the tests', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startValkeyServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('starts, and takes SET ... IFEQ (a write only while the value is still the one read)', async () => {
    expect(await server.command('SET', 'k', 'v', 'PX', 10_000)).toBe('OK');
    expect(await server.command('SET', 'k', 'w', 'PX', 10_000, 'IFEQ', 'v')).toBe('OK');
    expect(await server.command('SET', 'k', 'z', 'PX', 10_000, 'IFEQ', 'nope')).toBeNull();
    expect(await server.command('GET', 'k')).toBe('w');
  });
});
