import { describe, expect, it } from 'vitest';
import { FlightAbortedError } from '@flight/core';
import { LocalSingleFlight } from '../src/local/local-single-flight.js';

describe('LocalSingleFlight', () => {
  it('runs one execution for concurrent callers and tells who shared it', async () => {
    const group = new LocalSingleFlight();
    let runs = 0;
    let release!: (v: string) => void;
    const fn = () => {
      runs++;
      return new Promise<string>((resolve) => (release = resolve));
    };
    const calls = Array.from({ length: 10 }, () => group.do('k', fn));
    await new Promise((r) => setImmediate(r));
    release('v');
    const results = await Promise.all(calls);
    expect(runs).toBe(1);
    expect(results.every((r) => r.value === 'v' && r.shared)).toBe(true);
    expect(results.filter((r) => r.leader)).toHaveLength(1);
    const alone = await group.do('k', async () => 'again');
    expect(alone).toEqual({ value: 'again', shared: false, leader: true });
  });

  it('delivers a thrown error to every waiter', async () => {
    const group = new LocalSingleFlight();
    const boom = new Error('boom');
    const calls = Array.from({ length: 5 }, () => group.do('k', async () => Promise.reject(boom)));
    for (const call of calls) await expect(call).rejects.toBe(boom);
    expect(group.size).toBe(0);
  });

  it('lets one caller give up without cancelling the others, and forget() starts afresh', async () => {
    const group = new LocalSingleFlight();
    const releases: ((v: number) => void)[] = [];
    const fn = () => new Promise<number>((resolve) => releases.push(resolve));
    const controller = new AbortController();
    const quitter = group.do('k', fn, { signal: controller.signal });
    const stayer = group.do('k', fn);
    controller.abort();
    await expect(quitter).rejects.toBeInstanceOf(FlightAbortedError);
    group.forget('k');
    const fresh = group.do('k', fn);
    await new Promise((r) => setImmediate(r));
    expect(releases).toHaveLength(2);
    releases[1]!(2);
    expect(await fresh).toEqual({ value: 2, shared: false, leader: true });
    releases[0]!(1);
    expect(await stayer).toEqual({ value: 1, shared: true, leader: false });
  });
});
