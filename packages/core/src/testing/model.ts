/**
 * Model-based comparison: random sequences of operations from three simulated nodes (acquire,
 * markRunning, heartbeat, complete, fail, cancel, expire, forget, clock moves) run against a coordinator
 * and against the pure transition functions; every reply must match, and the invariants must hold
 * after every step (epochs only grow; a SUCCEEDED result never changes while it lives; a forgotten
 * record never yields a result).
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type fcModule from 'fast-check';
import type { InspectableCoordinator } from '../ports/coordinator.js';
import * as machine from '../state/transitions.js';
import type { Fence, FlightRecord, FlightRef, LeaseTerms, StaleCopy, StaleWindows, StoredResult } from '../state/types.js';

const LEASE: LeaseTerms = { takeoverAfterMs: 3000, leaseTtlMs: 6000, maxRunMs: 20_000 };
const NODES = ['node-0', 'node-1', 'node-2'] as const;

type Op =
  | {
      kind: 'acquire';
      node: number;
      follow: boolean;
      retryToken: boolean;
      startRunning: boolean;
      acceptStale: boolean;
      joinFailures: boolean;
    }
  | { kind: 'markRunning' | 'heartbeat'; node: number }
  | { kind: 'complete'; node: number; value: string; stale: StaleWindows | undefined }
  | { kind: 'fail'; node: number; retryable: boolean }
  | { kind: 'cancel'; epochOf: number | undefined }
  | { kind: 'expire' }
  | { kind: 'forget' }
  | { kind: 'advance'; ms: number };

/** How close to its logical expiry a record may be and already gone from a store whose TTLs run on the real clock. */
const REAL_TTL_SLACK_MS = 250;
/**
 * Runs that once failed for a reason of the comparison's own, run before the random ones: a record
 * forgotten 2 ms before its lease ends (its store TTL rewritten to 2 ms), then cancelled after it lapsed.
 */
const KNOWN_CASES: Op[][] = [
  [
    { kind: 'acquire', node: 2, follow: false, retryToken: true, startRunning: false, acceptStale: true, joinFailures: false },
    { kind: 'markRunning', node: 2 },
    { kind: 'advance', ms: 2999 },
    { kind: 'expire' },
    { kind: 'advance', ms: 2999 },
    { kind: 'forget' },
    { kind: 'cancel', epochOf: 2 },
    { kind: 'acquire', node: 0, follow: false, retryToken: false, startRunning: false, acceptStale: true, joinFailures: true },
  ],
];

export interface ModelRunOptions {
  coordinator: () => InspectableCoordinator;
  now: () => number;
  advance: (ms: number) => void;
  runs: number;
  fc: typeof fcModule;
  expect: (value: unknown) => any;
}

export function opArbitrary(fc: typeof fcModule) {
  const node = fc.integer({ min: 0, max: NODES.length - 1 });
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant('acquire' as const),
        node,
        follow: fc.boolean(),
        retryToken: fc.boolean(),
        startRunning: fc.boolean(),
        acceptStale: fc.boolean(),
        joinFailures: fc.boolean(),
      }),
    },
    { weight: 2, arbitrary: fc.record({ kind: fc.constantFrom('markRunning' as const, 'heartbeat' as const), node }) },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('complete' as const),
        node,
        value: fc.constantFrom('v1', 'v2', 'v3'),
        stale: fc.option(fc.record({ whileRevalidateMs: fc.constantFrom(0, 2000, 8000), ifErrorMs: fc.constantFrom(0, 4000, 30_000) }), {
          nil: undefined,
        }),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('fail' as const), node, retryable: fc.boolean() }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const), epochOf: fc.option(node, { nil: undefined }) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('expire' as const) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('forget' as const) }) },
    {
      weight: 2,
      arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.constantFrom(1, 500, 2999, 3001, 6001, 10_500, 21_000) }),
    },
  ) as fcModule.Arbitrary<Op>;
}

export async function runModelComparison(options: ModelRunOptions): Promise<void> {
  const { fc, expect } = options;
  await fc.assert(
    fc.asyncProperty(fc.array(opArbitrary(fc), { minLength: 1, maxLength: 30, size: 'medium' }), async (ops) => {
      const c = options.coordinator();
      const ref: FlightRef = { stage: 'model', key: `m-${randomUUID()}` };
      let model: FlightRecord | null = null;
      /** The flight's stale copy by the model (see `StaleCopy`). */
      let staleModel: StaleCopy | null = null;
      const fences: (Fence | undefined)[] = NODES.map(() => undefined);
      const joined: (number | undefined)[] = NODES.map(() => undefined);
      let highestEpoch = 0;
      let succeeded: { epoch: number; result: StoredResult } | undefined;

      const step = <R>(transition: machine.Transition<R>): R => {
        if (transition.next) model = structuredClone(transition.next);
        if (transition.stale !== undefined) staleModel = transition.stale && { ...transition.stale };
        return transition.reply;
      };
      /**
       * True when the model's stale copy may already be gone from a store whose TTLs run on the real clock
       * (within REAL_TTL_SLACK_MS of its last window's end); the model then drops it too.
       */
      const staleLapsed = (now: number): boolean => {
        const copy = staleModel;
        if (!copy || Math.max(copy.revalidateUntil, copy.errorUntil) - now > REAL_TTL_SLACK_MS) return false;
        staleModel = null;
        return true;
      };

      for (const op of ops) {
        const now = options.now();
        switch (op.kind) {
          case 'advance':
            options.advance(op.ms);
            break;
          case 'acquire': {
            const ownerToken = op.retryToken && fences[op.node] ? fences[op.node]!.ownerToken : randomUUID();
            const input = {
              ...ref,
              ...LEASE,
              ownerId: NODES[op.node]!,
              ownerToken,
              joinEpoch: op.follow ? joined[op.node] : undefined,
              startRunning: op.startRunning,
              acceptStale: op.acceptStale,
              joinFailures: op.joinFailures,
            };
            const expected = step(machine.acquire(model, input, now, staleModel));
            const actual = await c.acquire(input);
            if (expected.stale && !actual.stale && staleLapsed(now)) delete expected.stale;
            expect({ op, outcome: actual.outcome, meta: actual.meta, result: actual.result, stale: actual.stale }).toEqual({
              op,
              outcome: expected.outcome,
              meta: expected.meta,
              result: expected.result,
              stale: expected.stale,
            });
            if (actual.outcome === 'OWNER_NEW' || actual.outcome === 'OWNER_TAKEOVER') {
              // With the reply's handle, as core passes it back with the run's owner writes.
              fences[op.node] = {
                ...ref,
                ownerId: actual.meta.ownerId,
                ownerToken: actual.meta.ownerToken,
                epoch: actual.meta.epoch,
                handle: actual.handle,
              };
            }
            if (actual.outcome === 'FOLLOWER_WAIT') joined[op.node] = actual.meta.epoch;
            expect(actual.meta.epoch >= highestEpoch || model === null).toBe(true);
            break;
          }
          case 'markRunning':
          case 'heartbeat': {
            const fence = fences[op.node] ?? { ...ref, ownerId: NODES[op.node]!, ownerToken: 'none', epoch: 0 };
            const expected = step(machine[op.kind](model, fence, LEASE, now));
            expect({ op, reply: await c[op.kind](fence, LEASE) }).toEqual({ op, reply: expected });
            break;
          }
          case 'complete': {
            const fence = fences[op.node] ?? { ...ref, ownerId: NODES[op.node]!, ownerToken: 'none', epoch: 0 };
            // A result kept as a stale copy goes stale sooner: the windows are reached within a few clock moves.
            const input = { result: `${op.value}@${fence.epoch}`, resultTtlMs: op.stale ? 2000 : 10_000, stale: op.stale };
            if (!op.stale) delete input.stale;
            const expected = step(machine.complete(model, fence, input, now));
            expect({ op, reply: await c.complete(fence, input) }).toEqual({ op, reply: expected });
            break;
          }
          case 'fail': {
            const fence = fences[op.node] ?? { ...ref, ownerId: NODES[op.node]!, ownerToken: 'none', epoch: 0 };
            const input = {
              failure: {
                type: op.retryable ? ('TIMEOUT' as const) : ('VALIDATION' as const),
                code: 'E_X',
                message: 'm',
                retryable: op.retryable,
              },
              ttlMs: 5000,
            };
            const expected = step(machine.fail(model, fence, input, now));
            expect({ op, reply: await c.fail(fence, input) }).toEqual({ op, reply: expected });
            break;
          }
          case 'cancel': {
            // With an epoch: the one node `epochOf` owns (or owned) — possibly stale by now.
            const epoch = op.epochOf === undefined ? undefined : (fences[op.epochOf]?.epoch ?? 1);
            const input = { reason: 'model', ttlMs: 5000, epoch };
            const expected = step(machine.cancel(model, ref, input, now));
            expect({ op, reply: await c.cancel(ref, input) }).toEqual({ op, reply: expected });
            break;
          }
          case 'expire': {
            const input = { ttlMs: 5000 };
            const expected = step(machine.expire(model, ref, input, now));
            expect({ op, reply: await c.expire(ref, input) }).toEqual({ op, reply: expected });
            break;
          }
          case 'forget': {
            const expected = step(machine.forget(model, ref, now));
            expect({ op, reply: await c.forget(ref) }).toEqual({ op, reply: expected });
            break;
          }
        }
        // Invariants, read back from the coordinator after every step.
        if (c.readStale) {
          const now = options.now();
          const copy = await c.readStale(ref);
          if (!copy && machine.isStaleLive(staleModel, now)) staleLapsed(now);
          expect({ op, stale: copy }).toEqual({ op, stale: machine.isStaleLive(staleModel, now) ? staleModel : null });
        }
        const stored = model as FlightRecord | null;
        let liveModel = machine.isLive(stored, options.now()) ? stored : null;
        const left = liveModel ? liveModel.meta.expireAt - options.now() : Infinity;
        // A store's TTL runs on the real clock, the model's expiry on the simulated one: a record written
        // within REAL_TTL_SLACK_MS of its logical expiry is gone from the store within that many real ms, maybe
        // between this read and the next operation. Wait that long first, so that both agree from here on:
        // gone from the store, the simulated clock passes its expiry too.
        if (left <= REAL_TTL_SLACK_MS) await sleep(left + 2);
        const meta = await c.readMeta(ref);
        if (meta === null && liveModel && left <= REAL_TTL_SLACK_MS) {
          options.advance(left);
          liveModel = null;
        }
        expect({ op, meta }).toEqual({ op, meta: liveModel?.meta ?? null });
        if (meta) {
          expect(meta.epoch).toBeGreaterThanOrEqual(highestEpoch);
          highestEpoch = meta.epoch;
          if (machine.isForgotten(meta)) {
            expect({ op, forgottenResult: await c.readResult(ref) }).toEqual({ op, forgottenResult: null });
            succeeded = undefined;
          } else if (meta.status === 'SUCCEEDED') {
            const result = await c.readResult(ref);
            if (succeeded && succeeded.epoch === meta.epoch) expect(result).toBe(succeeded.result);
            succeeded = { epoch: meta.epoch, result: result! };
          }
        } else {
          succeeded = undefined;
        }
      }
    }),
    // FLIGHT_MODEL_SEED and FLIGHT_MODEL_PATH replay a failure's run (its `seed` and `path` as fast-check printed them).
    { numRuns: options.runs, examples: KNOWN_CASES.map((ops) => [ops] as [Op[]]), ...replayOf(process.env) },
  );
}

/** The fast-check parameters that replay one failing run, when the environment names it. */
function replayOf(env: NodeJS.ProcessEnv): { seed?: number; path?: string; endOnFailure?: boolean } {
  const seed = Number(env.FLIGHT_MODEL_SEED);
  if (!env.FLIGHT_MODEL_SEED || !Number.isSafeInteger(seed)) return {};
  return env.FLIGHT_MODEL_PATH ? { seed, path: env.FLIGHT_MODEL_PATH, endOnFailure: true } : { seed };
}
