/** Something a test counts as it happens (requests arriving, followers joining) and waits on instead of sleeping. */
export interface CountedEvents {
  readonly count: number;
  /** Counts one more. */
  add(): void;
  /** Resolves once `n` have been counted in all, or after `giveUpMs` (then the test's own assertions tell what is missing). */
  reach(n: number, giveUpMs?: number): Promise<void>;
}

export function countedEvents(): CountedEvents {
  let count = 0;
  const checks = new Set<() => void>();
  return {
    get count() {
      return count;
    },
    add() {
      count++;
      for (const check of [...checks]) check();
    },
    reach(n, giveUpMs) {
      if (count >= n) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          checks.delete(check);
          resolve();
        };
        const check = () => void (count >= n && done());
        const timer = giveUpMs === undefined ? undefined : setTimeout(done, giveUpMs);
        checks.add(check);
      });
    },
  };
}
