/**
 * `untilAborted` on a signal that carries many races one after another (an HTTP/1 connection's
 * disconnect signal, an application's shutdown signal): one listener of its own per signal, races that
 * settled are forgotten, races still pending all reject when the signal aborts.
 */
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { untilAborted } from '@flight/core/adapter';

describe('untilAborted', () => {
  it('adds one listener to a signal whatever the number of races, and settled races leave nothing behind', async () => {
    const controller = new AbortController();
    const { signal } = controller;
    for (let i = 0; i < 200; i++) expect(await untilAborted(Promise.resolve(i), signal)).toBe(i);
    await expect(untilAborted(Promise.reject(new Error('boom')), signal)).rejects.toThrow('boom');
    expect(getEventListeners(signal, 'abort')).toHaveLength(1);

    // Aborting now reaches no settled race: nothing is rejected twice, nothing goes unhandled.
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      controller.abort(new Error('gone'));
      await new Promise((resolve) => setTimeout(resolve, 10));
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    expect(unhandled).toEqual([]);
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });

  it('rejects every race still pending with the reason when the signal aborts, and leaves the work running', async () => {
    const controller = new AbortController();
    let finish!: (value: string) => void;
    const work = new Promise<string>((resolve) => (finish = resolve));
    const races = [untilAborted(work, controller.signal), untilAborted(work, controller.signal), untilAborted(work, controller.signal)];
    const done = untilAborted(Promise.resolve('early'), controller.signal);
    expect(await done).toBe('early');
    const reason = new Error('client left');
    controller.abort(reason);
    for (const race of races) await expect(race).rejects.toBe(reason);
    finish('late');
    expect(await work).toBe('late');
    // A race started after the abort rejects at once; its promise's own rejection is handled.
    await expect(untilAborted(Promise.reject(new Error('ignored')), controller.signal)).rejects.toBe(reason);
  });

  it('leaves no listener on a signal raced once (a timeout signal made for one call is not kept alive by it)', async () => {
    const once = AbortSignal.timeout(60_000);
    expect(await untilAborted(Promise.resolve('done'), once)).toBe('done');
    expect(getEventListeners(once, 'abort')).toHaveLength(0);
    // Two races at once on a fresh signal: the listener goes with the last of them.
    const both = new AbortController();
    let finish!: () => void;
    const slow = new Promise<void>((resolve) => (finish = resolve));
    const first = untilAborted(Promise.resolve(1), both.signal);
    const second = untilAborted(slow, both.signal);
    await first;
    finish();
    await second;
    // Raced twice: from now on the signal keeps its one listener (it is one that gets raced again and again).
    expect(getEventListeners(both.signal, 'abort')).toHaveLength(1);
  });

  it('keeps the races of two signals apart', async () => {
    const a = new AbortController();
    const b = new AbortController();
    const never = new Promise<never>(() => {});
    const onA = untilAborted(never, a.signal);
    const onB = untilAborted(Promise.resolve('b'), b.signal);
    a.abort('a gone');
    await expect(onA).rejects.toBe('a gone');
    expect(await onB).toBe('b');
    // b was raced once and its race settled: nothing of ours stays on it.
    expect(getEventListeners(b.signal, 'abort')).toHaveLength(0);
  });
});
