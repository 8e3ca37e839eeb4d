/**
 * Which stages' acquires mostly join a running flight (a herd) rather than start one or replay one: what
 * the coordinator's acquire does first depends on it. A stage that mostly joins goes to the acquire script
 * at once (the script counts the follower; the plain SET of fast-acquire.ts would only find the flight and
 * cost a round trip) and subscribes to the flight's channel before the script reads it, so the follower
 * needs no re-read after its subscription. Any other stage takes the plain SET and subscribes only once
 * it has to wait.
 *
 * Per stage, a saturating count (0 to JOIN_BIAS_LIMIT) of acquires that joined or took a run over minus
 * those that did not: a branch predictor's two bits. One acquire that goes the other way does not flip a
 * settled stage.
 */
import type { AcquireOutcome } from '@flight/core/adapter';

/** A stage is taken for a herd once this many more of its acquires joined (or took over) than did not. */
export const JOIN_BIAS_LIMIT = 2;

export interface JoinPredictor {
  /** Whether the next acquire of `stage` most likely joins a running flight. */
  joins(stage: string): boolean;
  /** An acquire of `stage` ended with `outcome`. */
  learn(stage: string, outcome: AcquireOutcome): void;
}

export function createJoinPredictor(): JoinPredictor {
  const bias = new Map<string, number>();
  return {
    joins: (stage) => (bias.get(stage) ?? 0) >= JOIN_BIAS_LIMIT,
    learn(stage, outcome) {
      const was = bias.get(stage) ?? 0;
      const now = outcome === 'FOLLOWER_WAIT' || outcome === 'OWNER_TAKEOVER' ? Math.min(JOIN_BIAS_LIMIT, was + 1) : Math.max(0, was - 1);
      if (now !== was) bias.set(stage, now);
    },
  };
}
