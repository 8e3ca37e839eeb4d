/**
 * The built entries (`dist/`, made by `pnpm build` before the tests run): `@flight/core/adapter` shares its
 * modules with `@flight/core` in both formats, so an error the adapter entry makes is an instance of the
 * class users import, and the main entry holds only the user API.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const dist = (file: string) => new URL(`../dist/${file}`, import.meta.url).href;

describe('the built entries', () => {
  it('CommonJS: an error made by the adapter entry is an instance of the main entry class', () => {
    const main = require('../dist/index.cjs') as typeof import('@flight/core');
    const adapter = require('../dist/adapter.cjs') as typeof import('@flight/core/adapter');
    const error = adapter.toCoordinationError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
    expect(error).toBeInstanceOf(main.FlightCoordinationError);
    expect(error).toBeInstanceOf(main.FlightError);
  });

  it('ESM: the same', async () => {
    const main = (await import(dist('index.js'))) as typeof import('@flight/core');
    const adapter = (await import(dist('adapter.js'))) as typeof import('@flight/core/adapter');
    expect(adapter.toCoordinationError(new Error('connect ECONNREFUSED'))).toBeInstanceOf(main.FlightCoordinationError);
  });

  it('keeps the state machine and the ports out of the main entry', async () => {
    const main = (await import(dist('index.js'))) as Record<string, unknown>;
    for (const name of ['transitions', 'toCoordinationError', 'flightId', 'DeadlineQueue', 'LocalSingleFlight', 'sleep'])
      expect(main[name]).toBeUndefined();
    expect(typeof main.createSingleFlight).toBe('function');
  });

  it('the main entry names at most 60 things (values and types): the user API, nothing an adapter author alone needs', () => {
    const source = readFileSync(new URL('../src/index.ts', import.meta.url), 'utf8');
    const names = [...source.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}/g)].flatMap((m) =>
      m[1]!
        .split(',')
        .map((name) => name.trim())
        .filter(Boolean),
    );
    expect(names.length).toBeGreaterThan(40);
    expect(names.length).toBeLessThanOrEqual(60);
    for (const port of ['Clock', 'FlightCoordinator', 'ReplayCache', 'ResultCodec', 'SessionLock']) expect(names).not.toContain(port);
  });
});
