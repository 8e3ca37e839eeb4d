/**
 * L1 copies under cluster-wide forgets (a coordinator with `listenForgets`): a copy is kept only of a value
 * read after the node started hearing the flight's forgets, a forget heard while a value is being fetched
 * wins over it, and a node that may miss forgets keeps no copy. Over the memory coordinator with the port's
 * listening added in the test (the Redis adapters run it across processes: forget-suite.ts).
 */
import { describe, expect, it } from 'vitest';
import { createMemoryCoordinator } from '@flight/core';
import type { FlightCoordinator, ForgetListener } from '@flight/core/adapter';
import { singleFlights } from './helpers.js';

const create = singleFlights();

/** The memory coordinator with `listenForgets`: the test decides when listening is covered. */
function withListening() {
  const inner = createMemoryCoordinator();
  const listeners = new Map<string, Set<ForgetListener>>();
  const coordinator: FlightCoordinator = Object.assign(Object.create(inner) as FlightCoordinator, {
    listenForgets(ref: { key: string }, listener: ForgetListener) {
      const set = listeners.get(ref.key) ?? new Set();
      listeners.set(ref.key, set.add(listener));
      return () => set.delete(listener);
    },
    async forget(ref: { stage: string; key: string }) {
      const reply = await inner.forget(ref);
      for (const listener of listeners.get(ref.key) ?? []) listener.forgotten();
      return reply;
    },
  });
  const each = (key: string, fn: (l: ForgetListener) => void) => [...(listeners.get(key) ?? [])].forEach(fn);
  return { coordinator, inner, each, listening: (key: string) => listeners.get(key)?.size ?? 0 };
}

const DEFAULTS = { l1: { enabled: true, ttlMs: 60_000 }, guard: { retry: false, circuitBreaker: false, timeoutMs: 0 } } as const;

describe('L1 copies kept only while forgets are heard', () => {
  it('a flight read once costs no listening; the second read starts it; copies only of reads after it is covered', async () => {
    const { coordinator, each, listening } = withListening();
    const a = create({ coordinator, mode: 'distributed', nodeId: 'a', defaults: DEFAULTS });
    const b = create({ coordinator, mode: 'distributed', nodeId: 'b', defaults: DEFAULTS });
    await a.execute('s', 'k', () => 'v');
    expect((await b.execute('s', 'k', () => 'x')).role).toBe('replay');
    expect(listening('k')).toBe(0);
    expect((await b.execute('s', 'k', () => 'x')).role).toBe('replay');
    expect(listening('k')).toBe(1);
    // Not covered yet: nothing kept.
    expect((await b.execute('s', 'k', () => 'x')).role).toBe('replay');
    each('k', (l) => l.covered(true));
    expect((await b.execute('s', 'k', () => 'x')).role).toBe('replay');
    expect(await b.execute('s', 'k', () => 'x')).toMatchObject({ role: 'l1', value: 'v' });
  });

  it('a forget heard while a value is being fetched wins over it; a node that may miss forgets keeps no copy', async () => {
    const { coordinator, each } = withListening();
    let gate: Promise<void> | undefined;
    const held = Object.assign(Object.create(coordinator) as FlightCoordinator, {
      async acquire(input: Parameters<FlightCoordinator['acquire']>[0]) {
        const reply = await coordinator.acquire(input);
        await gate;
        return reply;
      },
    });
    const a = create({ coordinator, mode: 'distributed', nodeId: 'a', defaults: DEFAULTS });
    const b = create({ coordinator: held, mode: 'distributed', nodeId: 'b', defaults: DEFAULTS });
    await a.execute('s', 'k', () => 'v1');
    await b.execute('s', 'k', () => 'x');
    await b.execute('s', 'k', () => 'x');
    each('k', (l) => l.covered(true));
    // B's read of v1 is in flight when the forget is heard: its caller gets v1, L1 never keeps it.
    let release!: () => void;
    gate = new Promise<void>((resolve) => (release = resolve));
    const reading = b.execute('s', 'k', () => 'x');
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await a.forget('s', 'k')).toBe(true);
    release();
    gate = undefined;
    expect(await reading).toMatchObject({ value: 'v1', role: 'replay' });
    expect(await b.execute('s', 'k', () => 'v2')).toMatchObject({ value: 'v2', role: 'owner' });
    expect(await b.execute('s', 'k', () => 'x')).toMatchObject({ value: 'v2', role: 'l1' });
    // Forgets may be missed now (the connection broke): the copy goes, and none is kept until covered again.
    each('k', (l) => l.covered(false));
    expect((await b.execute('s', 'k', () => 'x')).role).toBe('replay');
    expect((await b.execute('s', 'k', () => 'x')).role).toBe('replay');
    each('k', (l) => l.covered(true));
    expect((await b.execute('s', 'k', () => 'x')).role).toBe('replay');
    expect((await b.execute('s', 'k', () => 'x')).role).toBe('l1');
  });
});
