/**
 * A short in-process variant of `pnpm chaos --quick`: 3 node processes, requests over many keys (direct
 * calls, a slow HTTP route past its guard timeout, idempotent POSTs sent to every node), random faults
 * (kill/restart a node, SIGSTOP/SIGCONT a node, cut a node off from Redis, restart Redis empty, CLIENT
 * PAUSE) on a Redis of its own. Nothing wrong (an idempotent POST run twice without its earlier run's node
 * or Redis being lost counts as wrong), nothing unhandled, nothing left unanswered by a live node.
 */
import { describe, expect, it } from 'vitest';
import { formatSummary, recordFigure, runChaos } from '../src/index.js';

describe('chaos (bounded)', () => {
  it('answers every request correctly or with a typed error under random faults', async () => {
    const seed = Number(process.env.FLIGHT_CHAOS_SEED ?? 20_251_129);
    const summary = await runChaos({ durationMs: 20_000, faultEveryMs: 1800, keys: 120, perTick: 3, tickMs: 20, seed });
    console.log(`${formatSummary(summary)} seed=${seed}`);
    recordFigure('chaos (vitest, 20 s)', { ...summary, seed });
    expect(summary.wrong).toBe(0);
    expect(summary.unhandled).toBe(0);
    expect(summary.unanswered).toBe(0);
    expect(Object.keys(summary.typedErrors).filter((code) => code.startsWith('untyped'))).toEqual([]);
    expect(summary.faults).toBeGreaterThanOrEqual(8);
    expect(summary.faultsByKind['cut-node']).toBeGreaterThanOrEqual(1);
    expect(summary.requestsByKind).toMatchObject({ slow: expect.any(Number), post: expect.any(Number) });
    expect(summary.answered).toBeGreaterThan(summary.requests * 0.5);
  });
});
