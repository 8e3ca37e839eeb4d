import { describe, expect, it } from 'vitest';
import { silentLogger } from '@flight/core/adapter';
import { createManualClock } from '@flight/core/testing';
import { DeadlineQueue } from '../src/run/deadline-queue.js';
import { RunScope } from '../src/run/run-scope.js';

describe('DeadlineQueue (one timer per deadline length, not per call)', () => {
  it('fires due deadlines in order, skips cancelled ones, and keeps at most one timer per length', async () => {
    const clock = createManualClock();
    const queue = new DeadlineQueue(clock, silentLogger);
    const fired: string[] = [];
    const entries = Array.from({ length: 1000 }, (_, i) => queue.schedule(100, () => fired.push(`a${i}`)));
    queue.schedule(50, () => fired.push('short'));
    expect(clock.pending).toBe(2);
    for (const entry of entries.slice(1)) queue.cancel(entry);
    await clock.advance(60);
    expect(fired).toEqual(['short']);
    await clock.advance(40);
    expect(fired).toEqual(['short', 'a0']);
    expect(queue.size).toBe(0);
    queue.cancel(entries[0]); // after it fired: a no-op
    const late = queue.schedule(100, () => fired.push('late'));
    await clock.advance(99);
    queue.cancel(late);
    await clock.advance(10);
    expect(fired).toEqual(['short', 'a0']);
  });

  it('waits out deadlines longer than a Node timer can (2^31 - 1 ms) in steps, without firing early', async () => {
    const manual = createManualClock();
    const asked: number[] = [];
    const clock = { ...manual, setTimeout: (fn: () => void, ms: number) => (asked.push(ms), manual.setTimeout(fn, ms)) };
    const queue = new DeadlineQueue(clock, silentLogger);
    let fired = 0;
    queue.schedule(3_000_000_000, () => fired++);
    expect(asked).toEqual([2 ** 31 - 1]);
    await manual.advance(2 ** 31);
    expect(fired).toBe(0);
    expect(manual.pending).toBe(1);
    await manual.advance(3_000_000_000 - 2 ** 31);
    expect(fired).toBe(1);
  });

  it('a handler that throws is contained; later deadlines still fire', async () => {
    const clock = createManualClock();
    const queue = new DeadlineQueue(clock, silentLogger);
    const fired: number[] = [];
    queue.schedule(10, () => {
      throw new Error('boom');
    });
    queue.schedule(10, () => fired.push(1));
    await clock.advance(10);
    expect(fired).toEqual([1]);
  });
});

describe('RunScope', () => {
  it('creates no AbortController until the signal is read; a late reader gets an aborted signal', async () => {
    const clock = createManualClock();
    const queue = new DeadlineQueue(clock, silentLogger);
    const run = new RunScope();
    run.limit(queue, 100, () => new Error('deadline'));
    run.limit(queue, 500, () => new Error('later deadline, ignored'));
    const raced = run.race(new Promise(() => {})).catch((e: Error) => e.message);
    await clock.advance(100);
    expect(await raced).toBe('deadline');
    expect(run.signal.aborted).toBe(true);
    expect((run.signal.reason as Error).message).toBe('deadline');
  });
});
