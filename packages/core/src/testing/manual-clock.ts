import type { Clock, TimerHandle } from '../ports/clock.js';

/** A clock whose time and timers move only when the test says so. */
export interface ManualClock extends Clock {
  /** Moves time forward, running every timer that falls due (in order), awaiting microtasks between them. */
  advance(ms: number): Promise<void>;
  /** Timers still scheduled. */
  readonly pending: number;
}

export function createManualClock(start = 1_700_000_000_000): ManualClock {
  let time = start;
  let seq = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  const flush = () => new Promise<void>((resolve) => setImmediate(resolve));
  return {
    now: () => time,
    setTimeout(fn, ms) {
      const id = ++seq;
      timers.set(id, { at: time + Math.max(0, ms), fn });
      return id as TimerHandle;
    },
    clearTimeout(handle) {
      timers.delete(handle as number);
    },
    get pending() {
      return timers.size;
    },
    async advance(ms) {
      const target = time + ms;
      for (;;) {
        await flush();
        let next: [number, { at: number; fn: () => void }] | undefined;
        for (const entry of timers) if (entry[1].at <= target && (!next || entry[1].at < next[1].at)) next = entry;
        if (!next) break;
        timers.delete(next[0]);
        time = Math.max(time, next[1].at);
        next[1].fn();
      }
      time = target;
      await flush();
    },
  };
}
