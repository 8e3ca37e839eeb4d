/**
 * #16 hostile keys and #18 authenticated Redis, on a redis-server of the test's own.
 * - keys: empty, 1 MB, binary, `{ } * :`, NUL, newlines → validated or hashed; no collisions; one slot
 *   per flight; a prefix never touches another prefix's flights; input never becomes Lua code.
 * - auth: requirepass and an ACL user restricted to the prefix's keys and channel, with both adapters.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildFlightKey, createSingleFlight, FlightCoordinationError, FlightValidationError } from '@flight/core';
import { MAX_KEY_LENGTH } from '@flight/core/adapter';
import { createIoredisCoordinator } from '@flight/redis-ioredis';
import { createNodeRedisCoordinator } from '@flight/redis-node';
import { clusterKeySlot, flightKeys, noticeChannel, RECORD_LAYOUT } from '@flight/redis-scripts';
import { freePort, startRedisServer, type RedisServer } from '@flight/test-servers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordFigure } from '../src/index.js';

const LEASE = { takeoverAfterMs: 3000, leaseTtlMs: 6000, maxRunMs: 20_000 };
// The app's stage names the key; the request key (input) only through its digest.
const KEY_SHAPE = new RegExp(`^(app1|app2):s:\\{[A-Za-z0-9_-]{22}\\}:${RECORD_LAYOUT}$`);

const HOSTILE = [
  'a',
  '{a}',
  '{}',
  '}{',
  '*',
  '?*[a-z]',
  'a:b',
  'a:b:c',
  ':',
  '::',
  'line\nbreak',
  'cr\r\nlf',
  'tab\tx',
  'ключ ✓ 🚀',
  Buffer.from([0xff, 0xfe, 0x80, 0x01]).toString('latin1'),
  'x'.repeat(MAX_KEY_LENGTH),
  "'); redis.call('FLUSHALL') --",
  ']] redis.call("SET","pwned","1") --[[',
  '\\x00 not a nul',
];

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});

describe('#16 keys', () => {
  it('rejects empty, over-long and NUL keys before anything is sent', async () => {
    const c = createIoredisCoordinator({ redis: server.url, prefix: 'app1' });
    const flight = createSingleFlight({ coordinator: c, mode: 'distributed' });
    let calls = 0;
    const supplier = () => {
      calls++;
      return 'x';
    };
    try {
      const before = Number(/total_commands_processed:(\d+)/.exec(String(await server.command('INFO', 'stats')))![1]);
      for (const bad of ['', 'x'.repeat(1024 * 1024), 'nul\0inside', 'x'.repeat(MAX_KEY_LENGTH + 1)]) {
        await expect(flight.execute('s', bad, supplier)).rejects.toBeInstanceOf(FlightValidationError);
      }
      for (const stage of ['', 'a:b', 'a{b}', 'a b', '*', 'x'.repeat(65)]) {
        await expect(flight.execute(stage, 'k', supplier)).rejects.toBeInstanceOf(FlightValidationError);
      }
      const after = Number(/total_commands_processed:(\d+)/.exec(String(await server.command('INFO', 'stats')))![1]);
      expect(calls).toBe(0);
      expect(after - before).toBe(1); // only the INFO above
      // Long or free-text parts go through buildFlightKey: hashed to a short, stable, collision-free key.
      const mb = 'y'.repeat(1024 * 1024);
      const key = buildFlightKey('s', ['session', mb]);
      expect(key.length).toBeLessThan(100);
      expect(buildFlightKey('s', ['session', mb])).toBe(key);
      expect(buildFlightKey('s', ['session', `${mb}z`])).not.toBe(key);
      expect((await flight.execute('s', key, () => 'one-mb')).value).toBe('one-mb');
    } finally {
      await flight.close();
      await c.close();
    }
  });

  it('hostile keys: each flight its own result, key names never carry input, one slot per flight', async () => {
    const c = createIoredisCoordinator({ redis: server.url, prefix: 'app1' });
    const flight = createSingleFlight({ coordinator: c, mode: 'distributed', defaults: { l1: { enabled: false } } });
    const sessionKey = `session-${randomUUID()}`;
    try {
      await server.command('SET', 'sentinel', 'alive');
      const keys = [...HOSTILE, ...HOSTILE.map((k) => buildFlightKey('parts', [k, 'tail']))];
      const tags = new Set<string>();
      for (const key of keys) {
        // Raw keys and built keys, with hostile session ids and failure messages too.
        const r = await flight.execute('s', key, () => ({ echo: key }), { sessionId: `${key}${sessionKey}` });
        expect(r.value).toEqual({ echo: key });
        const keysOfFlight = flightKeys('app1', { stage: 's', key });
        tags.add(keysOfFlight.tag);
        expect(new Set([keysOfFlight.meta, noticeChannel('app1', keysOfFlight.tag, 0)].map(clusterKeySlot)).size).toBe(1);
      }
      expect(tags.size).toBe(keys.length);
      // Replays give each key its own stored value (no collision).
      for (const key of keys) expect((await flight.execute('s', key, () => ({ echo: 'rerun' }))).value).toEqual({ echo: key });
      // Failure messages and cancel reasons made of Lua are stored verbatim, never run.
      const lua = "'); redis.call('FLUSHALL') --";
      await expect(
        flight.execute('s', 'fails', () => {
          throw Object.assign(new Error(lua), { failureType: 'VALIDATION' });
        }),
      ).rejects.toMatchObject({ message: expect.stringContaining('FLUSHALL') });
      const meta = await c.readMeta({ stage: 's', key: 'fails' });
      expect(meta?.errorMessage).toBe(lua);
      expect(await server.command('GET', 'sentinel')).toBe('alive');
      expect(await server.command('GET', 'pwned')).toBeNull();
      const names = (await server.command('KEYS', 'app1*')) as string[];
      expect(names.filter((n) => !KEY_SHAPE.test(n))).toEqual([]);
      recordFigure('#16 hostile keys', { keys: keys.length, distinctTags: tags.size, luaInjected: false, keyNamesWithInput: 0 });
    } finally {
      await flight.close();
      await c.close();
    }
  });

  it('one prefix can never read, write or cancel another prefix’s flights', async () => {
    const one = createIoredisCoordinator({ redis: server.url, prefix: 'app1' });
    const two = createIoredisCoordinator({ redis: server.url, prefix: 'app2' });
    try {
      const ref = { stage: 'iso', key: randomUUID() };
      const a = await one.acquire({ ...ref, ...LEASE, ownerId: 'a', ownerToken: randomUUID() });
      const b = await two.acquire({ ...ref, ...LEASE, ownerId: 'b', ownerToken: randomUUID() });
      expect(a.outcome).toBe('OWNER_NEW');
      expect(b.outcome).toBe('OWNER_NEW');
      const fa = { ...ref, ownerId: 'a', ownerToken: a.meta.ownerToken, epoch: a.meta.epoch };
      // app2 cannot write app1's flight with app1's fence: its scripts only see app2 keys.
      expect((await two.complete(fa, { result: 'from-two', resultTtlMs: 5000 })).ok).toBe(false);
      expect((await two.cancel(ref, { reason: 'x', ttlMs: 5000 })).ok).toBe(true);
      expect(await one.readMeta(ref)).toMatchObject({ status: 'PENDING', ownerId: 'a' });
      expect((await one.complete(fa, { result: 'from-one', resultTtlMs: 5000 })).ok).toBe(true);
      expect(await two.readResult(ref)).toBeNull();
      expect(await one.readResult(ref)).toBe('from-one');
      expect(() => createIoredisCoordinator({ redis: server.url, prefix: 'app1:{x}' })).toThrow(FlightValidationError);
      expect(() => createIoredisCoordinator({ redis: server.url, prefix: '' })).toThrow(FlightValidationError);
    } finally {
      await one.close();
      await two.close();
    }
  });
});

describe('#18 authenticated Redis', () => {
  let secured: RedisServer;
  beforeAll(async () => {
    secured = await startRedisServer({ args: ['--requirepass', 's3cret'] });
    expect(String(await secured.command('PING'))).toMatch(/NOAUTH/);
    // An ACL user limited to its prefix's keys and channel and to what the scripts call.
    const setuser = [
      'ACL',
      'SETUSER',
      'flightapp',
      'on',
      '>app-pw',
      'resetkeys',
      '~app1:*',
      'resetchannels',
      '&app1:*',
      '-@all',
      '+@connection',
      '+info',
      '+evalsha',
      '+eval',
      '+ssubscribe',
      '+sunsubscribe',
      '+time',
      '+get',
      '+set',
      '+del',
      '+pexpire',
      '+spublish',
    ];
    const reply = await authed(secured, setuser);
    expect(reply).toBe('OK');
  });
  afterAll(async () => {
    await secured?.stop();
  });

  async function authed(s: RedisServer, command: string[]) {
    // One connection: AUTH then the command (rawCommand sends one command per connection).
    const { Redis } = await import('ioredis');
    const client = new Redis({ port: s.port, password: 's3cret', lazyConnect: true });
    await client.connect();
    try {
      return await client.call(command[0]!, ...command.slice(1));
    } finally {
      client.disconnect();
    }
  }

  const adapters = {
    ioredis: (port: number, auth: { username?: string; password: string }, timeout = 1000) =>
      createIoredisCoordinator({ redis: { port, ...auth, maxRetriesPerRequest: 1 }, prefix: 'app1', commandTimeoutMs: timeout }),
    'node-redis': (port: number, auth: { username?: string; password: string }, timeout = 1000) =>
      createNodeRedisCoordinator({ redis: { socket: { port }, ...auth }, prefix: 'app1', commandTimeoutMs: timeout }),
  };

  for (const [name, make] of Object.entries(adapters)) {
    it(`${name}: requirepass and an ACL user run a whole flight; a wrong password is a typed error by the deadline`, async () => {
      const results: Record<string, unknown> = {};
      for (const auth of [{ password: 's3cret' }, { username: 'flightapp', password: 'app-pw' }]) {
        const c = make(secured.port, auth);
        const flight = createSingleFlight({ coordinator: c, mode: 'distributed', defaults: { l1: { enabled: false } } });
        const follower = make(secured.port, auth);
        try {
          const key = randomUUID();
          const fence = await c.acquire({ stage: 's', key, ...LEASE, ownerId: 'a', ownerToken: randomUUID() });
          const f = { stage: 's', key, ownerId: 'a', ownerToken: fence.meta.ownerToken, epoch: fence.meta.epoch };
          expect((await c.markRunning(f, LEASE)).ok).toBe(true);
          const waiting = follower.waitForTerminal({ stage: 's', key }, { epoch: f.epoch, timeoutMs: 3000 });
          await sleep(100);
          expect((await c.complete(f, { result: 'v', resultTtlMs: 5000 })).ok).toBe(true);
          expect(await waiting).toMatchObject({ status: 'SUCCEEDED' });
          expect((await flight.execute('s', `${key}-2`, () => 'ok')).value).toBe('ok');
          results[auth.username ?? 'requirepass'] = 'ok';
        } finally {
          await flight.close();
          await c.close();
          await follower.close();
        }
      }
      const bad = make(secured.port, { password: 'wrong' }, 500);
      const started = Date.now();
      const error = await bad.acquire({ stage: 's', key: 'k', ...LEASE, ownerId: 'a', ownerToken: 't' }).catch((e: unknown) => e);
      await bad.close().catch(() => undefined);
      expect(error).toBeInstanceOf(FlightCoordinationError);
      recordFigure(`#18 auth ${name}`, { ...results, wrongPassword: (error as Error).constructor.name, ms: Date.now() - started });
    });
  }
});

describe('#18 TLS', () => {
  const tlsDir = new URL('./fixtures/tls/', import.meta.url);
  const cert = readFileSync(new URL('cert.pem', tlsDir), 'utf8');
  let server: RedisServer;
  let tlsPort: number;
  beforeAll(async () => {
    tlsPort = await freePort();
    server = await startRedisServer({
      args: [
        '--tls-port',
        String(tlsPort),
        '--tls-cert-file',
        fileURLToPath(new URL('cert.pem', tlsDir)),
        '--tls-key-file',
        fileURLToPath(new URL('key.pem', tlsDir)),
        '--tls-ca-cert-file',
        fileURLToPath(new URL('cert.pem', tlsDir)),
        '--tls-auth-clients',
        'no',
      ],
    });
  });
  afterAll(async () => {
    await server?.stop();
  });

  const adapters = {
    ioredis: () =>
      createIoredisCoordinator({ redis: { port: tlsPort, host: '127.0.0.1', tls: { ca: cert } }, prefix: 'tls', commandTimeoutMs: 2000 }),
    'node-redis': () =>
      createNodeRedisCoordinator({
        redis: { socket: { port: tlsPort, host: '127.0.0.1', tls: true, ca: cert } },
        prefix: 'tls',
        commandTimeoutMs: 2000,
      }),
  };

  for (const [name, make] of Object.entries(adapters)) {
    it(`${name}: TLS client options are passed through; owner and follower share one run over TLS`, async () => {
      const nodes = [make(), make()];
      const flights = nodes.map((coordinator, i) =>
        createSingleFlight({ coordinator, mode: 'distributed', nodeId: `tls-${i}`, defaults: { l1: { enabled: false } } }),
      );
      try {
        let runs = 0;
        const key = randomUUID();
        const supplier = async () => {
          runs++;
          await sleep(150);
          return { over: 'tls' };
        };
        const results = await Promise.all(flights.map((f) => f.execute('tls', key, supplier)));
        expect(runs).toBe(1);
        expect(results.map((r) => r.role).sort()).toEqual(['follower', 'owner']);
        expect(results.every((r) => (r.value as { over: string }).over === 'tls')).toBe(true);
        // The coordinators' connections (commands and the subscriber) came in on the TLS port (laddr).
        const overTls = String(await server.command('CLIENT', 'LIST'))
          .split('\n')
          .filter((line) => line.includes(`laddr=127.0.0.1:${tlsPort}`));
        expect(overTls.length).toBeGreaterThanOrEqual(3);
        // The subscriber: its last command was a (un)subscribe, or — node-redis, whose RESP3 subscriber sends the
        // follower's re-read right behind its SSUBSCRIBE — the one RESP3 connection.
        expect(overTls.some((line) => /cmd=s?(un)?subscribe/.test(line) || /\bresp=3\b/.test(line))).toBe(true);
        recordFigure(`#18 TLS ${name}`, { runs, roles: results.map((r) => r.role) });
      } finally {
        await Promise.all(flights.map((f) => f.close()));
        await Promise.all(nodes.map((c) => c.close()));
      }
    });
  }
});
