/**
 * Figures measured by the reliability tests: printed as one `[reliability]` line each and appended to
 * a JSON-lines file (FLIGHT_FIGURES_FILE, default <tmp>/flight-reliability-figures.jsonl), from which
 * RELIABILITY.md takes its numbers.
 */
import { appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export const FIGURES_FILE = process.env.FLIGHT_FIGURES_FILE ?? join(tmpdir(), 'flight-reliability-figures.jsonl');

export function recordFigure(scenario: string, figures: Record<string, unknown>): void {
  const line = JSON.stringify({ scenario, at: new Date().toISOString(), ...figures });
  console.log(`[reliability] ${line}`);
  try {
    appendFileSync(FIGURES_FILE, `${line}\n`);
  } catch {
    // figures are informative only
  }
}

/** Collects unhandled rejections for the duration of a test. */
export function trackUnhandledRejections(): { readonly errors: unknown[]; dispose(): void } {
  const errors: unknown[] = [];
  const listener = (reason: unknown) => errors.push(reason);
  process.on('unhandledRejection', listener);
  return {
    errors,
    dispose() {
      process.off('unhandledRejection', listener);
    },
  };
}

/** Node's promise timer, under the name the tests use. */
export { sleep };

/** Polls `predicate` every `everyMs` until it is true or `timeoutMs` passes; returns whether it became true. */
export async function eventually(predicate: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 20): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (await predicate()) return true;
    if (Date.now() > until) return false;
    await sleep(everyMs);
  }
}
