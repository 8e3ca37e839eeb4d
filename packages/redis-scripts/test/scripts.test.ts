import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { clusterKeySlot, flightKeys, LUA_SCRIPTS, noticeChannel, RECORD_LAYOUT, resolveRedisOptions } from '../src/index';
import { rawCommand, sharedRedisUrl } from '@flight/test-servers';

const root = fileURLToPath(new URL('..', import.meta.url));

describe('Lua bundle', () => {
  it('src/lua.generated.ts is fresh (run `pnpm gen:lua` after editing lua/ or src/record-layout.ts)', () => {
    expect(() =>
      execFileSync(process.execPath, ['--import', 'tsx', 'scripts/gen-lua.mjs', '--check'], { cwd: root, stdio: 'pipe' }),
    ).not.toThrow();
  });

  it('has one script per .lua file, each with a KEYS/ARGV/Returns header and the version line inlined', () => {
    const files = readdirSync(`${root}/lua`).filter((f) => f.endsWith('.lua'));
    expect(Object.keys(LUA_SCRIPTS).sort()).toEqual(files.map((f) => f.slice(0, -4)).sort());
    for (const file of files) {
      const text = readFileSync(`${root}/lua/${file}`, 'utf8');
      expect(text).toMatch(/KEYS\[1\]/);
      expect(text).toMatch(/Returns/);
    }
    for (const script of Object.values(LUA_SCRIPTS)) expect(script.source).toContain("FLIGHT_SCRIPT_VERSION = '@flight/redis-scripts/");
  });

  it('every script compiles on the server and its SHA1 is what EVALSHA runs', async () => {
    const port = Number(new URL(sharedRedisUrl()).port || 6379);
    for (const script of Object.values(LUA_SCRIPTS)) {
      expect(await rawCommand(port, ['SCRIPT', 'LOAD', script.source])).toBe(script.sha);
    }
  });
});

describe('key layout', () => {
  it('puts every key of a flight under one hash tag, whatever the user key holds', async () => {
    const port = Number(new URL(sharedRedisUrl()).port || 6379);
    for (const key of ['{a}:b c', '}{', '', 'ключ ✓', 'x\ny', '{}']) {
      const keys = flightKeys('flight', { stage: 's', key });
      expect(keys.tag).toMatch(/^[A-Za-z0-9_-]{22}$/);
      const slots = [keys.meta, noticeChannel('flight', keys.tag, 3)].map(clusterKeySlot);
      expect(new Set(slots).size).toBe(1);
      expect(await rawCommand(port, ['CLUSTER', 'KEYSLOT', keys.meta]).catch(() => slots[0])).toSatisfy(
        (v: unknown) => v === slots[0] || v instanceof Error,
      );
    }
    expect(flightKeys('p', { stage: 'a', key: 'b:c' }).tag).not.toBe(flightKeys('p', { stage: 'a:b', key: 'c' }).tag);
  });

  it('names the record layout in every flight key, in step with the scripts version', () => {
    // Scripts of one layout never read another layout's record (a rolling upgrade would mis-parse it).
    const version = /FLIGHT_SCRIPT_VERSION = '@flight\/redis-scripts\/(\d+)'/.exec(LUA_SCRIPTS.acquire.source)?.[1];
    expect(RECORD_LAYOUT).toBe(`r${version}`);
    // The stage names the key (found by `SCAN MATCH app:s:*`); the request key only through its digest.
    expect(flightKeys('app', { stage: 's', key: 'k' }).meta).toMatch(new RegExp(`^app:s:\\{[A-Za-z0-9_-]{22}\\}:${RECORD_LAYOUT}$`));
  });

  it('computes cluster slots like Redis', () => {
    expect(clusterKeySlot('foo')).toBe(12182);
    expect(clusterKeySlot('{user1000}.following')).toBe(clusterKeySlot('user1000'));
    expect(clusterKeySlot('foo{}{bar}')).toBe(clusterKeySlot('foo{}{bar}'));
  });

  it('validates options once', () => {
    expect(resolveRedisOptions()).toMatchObject({ prefix: 'flight', commandTimeoutMs: 2000 });
    expect(() => resolveRedisOptions({ prefix: 'a{b}' })).toThrow(/prefix/);
    expect(() => resolveRedisOptions({ commandTimeoutMs: 0 })).toThrow(/commandTimeoutMs/);
  });
});
