/**
 * Issue 11.6: callers and the L1 cache never share one mutable object. Every caller of a run (and every
 * L1 hit) receives the same deep-frozen value: a mutation throws instead of reaching another caller.
 * Also: the L1 cache is bounded by bytes.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createLruReplayCache,
  createMemoryCoordinator,
  createSingleFlight,
  type SingleFlight,
  type SingleFlightOptions,
} from '@flight/core';
import { figure } from './helpers.js';

const created: SingleFlight[] = [];
const make = (options: SingleFlightOptions) => {
  const sf = createSingleFlight({
    ...options,
    defaults: { heartbeatIntervalMs: 500, takeoverAfterMs: 800, pollIntervalMs: 50, ...options.defaults },
  });
  created.push(sf);
  return sf;
};
afterEach(async () => {
  await Promise.all(created.splice(0).map((sf) => sf.close()));
});

type Notes = { notes: string[]; meta: { by: string } };
const supplier = async (): Promise<Notes> => {
  await sleep(20);
  return { notes: ['ok'], meta: { by: 'model' } };
};

describe('what callers receive (one deep-frozen value per run)', () => {
  for (const mode of ['local', 'distributed'] as const) {
    it(`${mode}: a caller cannot change what the other callers and later L1 hits receive`, async () => {
      const sf = make({ mode, coordinator: createMemoryCoordinator() });
      const key = randomUUID();
      const [a, b] = await Promise.all([sf.execute('eval', key, supplier), sf.execute('eval', key, supplier)]);
      expect(a.value).toBe(b.value); // one value per run, not a copy per caller
      expect(() => a.value.notes.push('edited by caller A')).toThrow(TypeError);
      expect(() => {
        a.value.meta.by = 'caller A';
      }).toThrow(TypeError);
      const later = await sf.execute('eval', key, supplier);
      expect(later.role).toBe('l1');
      expect(later.value).toEqual({ notes: ['ok'], meta: { by: 'model' } });
      figure(`11.6 ${mode}`, {
        mutationsAttempted: 2,
        mutationsThrown: 2,
        laterL1ValueUnchanged: true,
        sameObjectForConcurrentCallers: a.value === b.value,
      });
    });
  }

  it('distributed: a follower on another node and a replay get frozen values too', async () => {
    const coordinator = createMemoryCoordinator();
    const [n1, n2] = [make({ mode: 'distributed', coordinator }), make({ mode: 'distributed', coordinator })];
    const key = randomUUID();
    const [owner, follower] = await Promise.all([n1.execute('eval', key, supplier), n2.execute('eval', key, supplier)]);
    expect(follower.role).toBe('follower');
    const n3 = make({ mode: 'distributed', coordinator });
    const replay = await n3.execute('eval', key, supplier);
    expect(replay.role).toBe('replay');
    for (const r of [owner, follower, replay]) {
      expect(Object.isFrozen(r.value) && Object.isFrozen(r.value.notes) && Object.isFrozen(r.value.meta)).toBe(true);
    }
  });

  it('local: encodeLocalResults gives callers the JSON shape distributed callers get', async () => {
    const sf = make({ mode: 'local', encodeLocalResults: true });
    const at = new Date(0);
    const r = await sf.execute('eval', randomUUID(), async () => ({ at }));
    expect(r.value).toEqual({ at: at.toISOString() });
    expect(Object.isFrozen(r.value)).toBe(true);
  });
});

describe('L1 bounded by bytes', () => {
  it('evicts the least recently used results once their encoded bytes pass maxBytes', async () => {
    const sf = make({
      mode: 'distributed',
      coordinator: createMemoryCoordinator(),
      replayCache: createLruReplayCache({ maxBytes: 10_000 }),
    });
    const keys = [randomUUID(), randomUUID(), randomUUID()];
    // Three results of about 4 KB each: 12 KB does not fit in 10 KB.
    for (const key of keys) await sf.execute('eval', key, async () => `${key}:${'x'.repeat(4000)}`);
    expect((await sf.execute('eval', keys[2]!, supplier)).role).toBe('l1');
    expect((await sf.execute('eval', keys[0]!, supplier)).role).toBe('replay');
  });
});

describe('deep freeze leaves class instances alone', () => {
  it('freezes plain objects and arrays to the leaves, never a Map, Date or Buffer inside them', async () => {
    const sf = make({ mode: 'local' });
    const value = { list: [{ a: 1 }], when: new Date(0), map: new Map([['k', 1]]), bytes: Buffer.from('ab') };
    const r = await sf.execute('eval', randomUUID(), async () => value);
    expect(r.value).toBe(value);
    expect(Object.isFrozen(value) && Object.isFrozen(value.list) && Object.isFrozen(value.list[0])).toBe(true);
    expect(Object.isFrozen(value.when) || Object.isFrozen(value.map)).toBe(false);
    value.map.set('k', 2); // still usable
    value.bytes[0] = 0x41;
    expect(value.bytes.toString()).toBe('Ab');
  });
});
