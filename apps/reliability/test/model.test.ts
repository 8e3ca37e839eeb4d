/**
 * Model-based tests of the real Lua scripts on a Redis of the test's own.
 *
 * 1. `fc.commands` + `asyncModelRun`: random interleavings of acquire (fresh or retried token, as a
 *    follower or not), markRunning, heartbeat, complete, fail, cancel, expire, forget and clock moves from three
 *    simulated nodes, plus faults (Redis emptied with its script cache — a restart — and the meta key
 *    evicted). Every reply is compared with the pure state machine, and after every step: at most one
 *    owner epoch can write, a SUCCEEDED result never changes, a forgotten record yields no result, epochs
 *    only grow (across loss too), every key has a TTL.
 * 2. `scheduledModelRun`: the same operations fired without waiting, released in an order chosen by the
 *    fast-check scheduler, over one pipelined connection (so reply order = execution order); the replies'
 *    metadata must tell one consistent story.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import {
  transitions as machine,
  type Fence,
  type FlightMeta,
  type FlightRecord,
  type FlightRef,
  type LeaseTerms,
  type StoredResult,
} from '@flight/core/adapter';
import { createIoredisCoordinator } from '@flight/redis-ioredis';
import { flightKeys } from '@flight/redis-scripts';
import { startRedisServer, type RedisServer } from '@flight/test-servers';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordFigure } from '../src/index.js';

const LEASE: LeaseTerms = { takeoverAfterMs: 3000, leaseTtlMs: 6000, maxRunMs: 20_000 };
const NODES = ['node-0', 'node-1', 'node-2'] as const;
const PREFIX = 'mbt';

let server: RedisServer;
let raw: Redis;

beforeAll(async () => {
  server = await startRedisServer();
  raw = new Redis(server.url);
});
afterAll(async () => {
  raw?.disconnect();
  await server?.stop();
});

interface Model {
  record: FlightRecord | null;
  fences: (Fence | undefined)[];
  joined: (number | undefined)[];
  /** Highest epoch ever granted, across loss of the record. */
  highest: number;
  /** The stored success (epoch and result) while it lives. */
  succeeded: { epoch: number; result: StoredResult } | undefined;
  faults: number;
}

interface Real {
  c: ReturnType<typeof createIoredisCoordinator>;
  ref: FlightRef;
  clock: { now: number };
}

type Cmd = fc.AsyncCommand<Model, Real, false>;

const fenceOrNone = (m: Model, node: number, ref: FlightRef): Fence =>
  m.fences[node] ?? { ...ref, ownerId: NODES[node]!, ownerToken: 'none', epoch: 0 };

function apply<R>(m: Model, t: machine.Transition<R>): R {
  if (t.next) m.record = structuredClone(t.next);
  return t.reply;
}

/** Who may write right now, according to the real store: the fence matching the live meta, if active. */
async function assertOnlyCurrentOwnerWrote(r: Real, fence: Fence, before: FlightMeta | null, ok: boolean) {
  if (!ok) return;
  // An accepted owner write must come from the one fence the store held at that moment.
  expect(before, 'an accepted write needs a live record').not.toBeNull();
  expect({ ownerId: before!.ownerId, ownerToken: before!.ownerToken, epoch: before!.epoch }).toEqual({
    ownerId: fence.ownerId,
    ownerToken: fence.ownerToken,
    epoch: fence.epoch,
  });
}

async function checkInvariants(m: Model, r: Real, label: string): Promise<void> {
  const meta = await r.c.readMeta(r.ref);
  const live = machine.isLive(m.record, r.clock.now) ? m.record : null;
  expect({ label, meta }).toEqual({ label, meta: live?.meta ?? null });
  if (meta) {
    expect(meta.epoch).toBeLessThanOrEqual(m.highest);
    if (machine.isForgotten(meta)) {
      expect(await r.c.readResult(r.ref), 'a forgotten record yields no result').toBeNull();
      m.succeeded = undefined;
    } else if (meta.status === 'SUCCEEDED') {
      const result = await r.c.readResult(r.ref);
      if (m.succeeded && m.succeeded.epoch === meta.epoch) expect(result, 'a SUCCEEDED result never changes').toBe(m.succeeded.result);
      m.succeeded = { epoch: meta.epoch, result: result! };
    } else if (m.succeeded && meta.epoch === m.succeeded.epoch) {
      throw new Error(`SUCCEEDED epoch ${meta.epoch} changed to ${meta.status}`);
    }
  }
  // Every key has a TTL.
  const keys = [...flightKeys(PREFIX, r.ref).list];
  const pttls = await Promise.all(keys.map((key) => raw.pttl(key)));
  for (let i = 0; i < keys.length; i++) expect({ key: keys[i], pttl: pttls[i] }).not.toMatchObject({ pttl: -1 });
  const all = await raw.keys('*');
  expect(
    all.every((key) => keys.includes(key)),
    `only this flight's keys exist: ${all.join(',')}`,
  ).toBe(true);
}

function granted(m: Model, meta: FlightMeta, fresh: boolean) {
  if (fresh) {
    expect(meta.epoch, 'a new owner gets an epoch above every earlier one, even after loss').toBeGreaterThan(m.highest);
    m.highest = meta.epoch;
  }
}

const acquireCmd = (node: number, follow: boolean, retryToken: boolean, startRunning: boolean): Cmd => ({
  check: () => true,
  async run(m, r) {
    const previous = m.fences[node];
    const ownerToken = retryToken && previous ? previous.ownerToken : randomUUID();
    const input = { ...r.ref, ...LEASE, ownerId: NODES[node]!, ownerToken, joinEpoch: follow ? m.joined[node] : undefined, startRunning };
    const expected = apply(m, machine.acquire(m.record, input, r.clock.now));
    const actual = await r.c.acquire(input);
    expect({ outcome: actual.outcome, meta: actual.meta, result: actual.result }).toEqual({
      outcome: expected.outcome,
      meta: expected.meta,
      result: expected.result,
    });
    if (actual.outcome === 'OWNER_NEW' || actual.outcome === 'OWNER_TAKEOVER') {
      const fresh = !(previous && previous.ownerToken === ownerToken && previous.epoch === actual.meta.epoch);
      granted(m, actual.meta, fresh);
      m.fences[node] = { ...r.ref, ownerId: actual.meta.ownerId, ownerToken: actual.meta.ownerToken, epoch: actual.meta.epoch };
    }
    if (actual.outcome === 'FOLLOWER_WAIT') m.joined[node] = actual.meta.epoch;
    await checkInvariants(m, r, `acquire ${node}`);
  },
  toString: () => `acquire(${node}${follow ? ',follow' : ''}${retryToken ? ',retry' : ''}${startRunning ? ',run' : ''})`,
});

const renewCmd = (kind: 'markRunning' | 'heartbeat', node: number): Cmd => ({
  check: () => true,
  async run(m, r) {
    const fence = fenceOrNone(m, node, r.ref);
    const before = await r.c.readMeta(r.ref);
    const expected = apply(m, machine[kind](m.record, fence, LEASE, r.clock.now));
    const actual = await r.c[kind](fence, LEASE);
    expect(actual).toEqual(expected);
    await assertOnlyCurrentOwnerWrote(r, fence, before, actual.ok);
    await checkInvariants(m, r, `${kind} ${node}`);
  },
  toString: () => `${kind}(${node})`,
});

const completeCmd = (node: number, value: string): Cmd => ({
  check: () => true,
  async run(m, r) {
    const fence = fenceOrNone(m, node, r.ref);
    const input = { result: `${value}@${fence.epoch}`, resultTtlMs: 10_000 };
    const before = await r.c.readMeta(r.ref);
    const expected = apply(m, machine.complete(m.record, fence, input, r.clock.now));
    const actual = await r.c.complete(fence, input);
    expect(actual).toEqual(expected);
    await assertOnlyCurrentOwnerWrote(r, fence, before, actual.ok);
    await checkInvariants(m, r, `complete ${node}`);
  },
  toString: () => `complete(${node},${value})`,
});

const failCmd = (node: number, retryable: boolean): Cmd => ({
  check: () => true,
  async run(m, r) {
    const fence = fenceOrNone(m, node, r.ref);
    const input = {
      failure: { type: retryable ? ('TIMEOUT' as const) : ('VALIDATION' as const), code: 'E_X', message: 'm', retryable },
      ttlMs: 5000,
    };
    const before = await r.c.readMeta(r.ref);
    const expected = apply(m, machine.fail(m.record, fence, input, r.clock.now));
    const actual = await r.c.fail(fence, input);
    expect(actual).toEqual(expected);
    await assertOnlyCurrentOwnerWrote(r, fence, before, actual.ok);
    await checkInvariants(m, r, `fail ${node}`);
  },
  toString: () => `fail(${node},${retryable ? 'retryable' : 'final'})`,
});

/** A cancel of whatever run is active, or (`epochOf`) of the run that node owns or owned — maybe stale. */
const cancelCmd = (epochOf: number | undefined): Cmd => ({
  check: () => true,
  async run(m, r) {
    const epoch = epochOf === undefined ? undefined : (m.fences[epochOf]?.epoch ?? 1);
    const input = { reason: 'model', ttlMs: 5000, epoch };
    expect(await r.c.cancel(r.ref, input)).toEqual(apply(m, machine.cancel(m.record, r.ref, input, r.clock.now)));
    await checkInvariants(m, r, 'cancel');
  },
  toString: () => (epochOf === undefined ? 'cancel' : `cancel(epoch of ${epochOf})`),
});

const expireCmd = (): Cmd => ({
  check: () => true,
  async run(m, r) {
    const input = { ttlMs: 5000 };
    expect(await r.c.expire(r.ref, input)).toEqual(apply(m, machine.expire(m.record, r.ref, input, r.clock.now)));
    await checkInvariants(m, r, 'expire');
  },
  toString: () => 'expire',
});

const forgetCmd = (): Cmd => ({
  check: () => true,
  async run(m, r) {
    expect(await r.c.forget(r.ref)).toEqual(apply(m, machine.forget(m.record, r.ref, r.clock.now)));
    await checkInvariants(m, r, 'forget');
  },
  toString: () => 'forget',
});

const advanceCmd = (ms: number): Cmd => ({
  check: () => true,
  async run(m, r) {
    r.clock.now += ms;
    await checkInvariants(m, r, `advance ${ms}`);
  },
  toString: () => `advance(${ms})`,
});

/** Redis restarted empty: data and script cache gone (EVALSHA → NOSCRIPT → EVAL). A restart takes ≥ 90 ms of real time. */
const restartCmd = (): Cmd => ({
  check: () => true,
  async run(m, r) {
    await raw.flushall();
    await raw.script('FLUSH');
    r.clock.now += 100;
    m.record = null;
    m.succeeded = undefined;
    m.faults++;
    await checkInvariants(m, r, 'restart-empty');
  },
  toString: () => 'restartEmpty',
});

/** The meta hash evicted (allkeys-lru picks it): the result and stream may stay behind. */
const evictCmd = (): Cmd => ({
  check: () => true,
  async run(m, r) {
    await raw.del(flightKeys(PREFIX, r.ref).meta);
    r.clock.now += 1;
    m.record = null;
    m.succeeded = undefined;
    m.faults++;
    await checkInvariants(m, r, 'evict-meta');
  },
  toString: () => 'evictMeta',
});

const node = fc.integer({ min: 0, max: NODES.length - 1 });
const commandArbs = [
  fc.tuple(node, fc.boolean(), fc.boolean(), fc.boolean()).map(([n, f, t, run]) => acquireCmd(n, f, t, run)),
  fc.tuple(fc.constantFrom('markRunning' as const, 'heartbeat' as const), node).map(([k, n]) => renewCmd(k, n)),
  fc.tuple(node, fc.constantFrom('v1', 'v2')).map(([n, v]) => completeCmd(n, v)),
  fc.tuple(node, fc.boolean()).map(([n, r]) => failCmd(n, r)),
  fc.option(node, { nil: undefined }).map((n) => cancelCmd(n)),
  fc.constant(null).map(() => expireCmd()),
  fc.constant(null).map(() => forgetCmd()),
  fc.constantFrom(1, 500, 2999, 3001, 6001, 21_000).map((ms) => advanceCmd(ms)),
  fc.constant(null).map(() => restartCmd()),
  fc.constant(null).map(() => evictCmd()),
];

describe('model-based: the real Lua scripts against the pure state machine, with faults', () => {
  it('keeps every invariant over random interleavings of 3 nodes, restarts and evictions (asyncModelRun)', async () => {
    const started = Date.now();
    let runs = 0;
    let steps = 0;
    let faults = 0;
    await fc.assert(
      fc.asyncProperty(fc.commands(commandArbs, { maxCommands: 40 }), async (cmds) => {
        runs++;
        await raw.flushall();
        const clock = { now: 1_700_000_000_000 + runs * 1_000_000 };
        const c = createIoredisCoordinator({ client: raw, prefix: PREFIX, clock: () => clock.now, commandTimeoutMs: 5000 });
        const ref = { stage: 'model', key: `k-${randomUUID()}` };
        const model: Model = { record: null, fences: [], joined: [], highest: 0, succeeded: undefined, faults: 0 };
        const list = [...cmds];
        steps += list.length;
        await fc.asyncModelRun(() => ({ model, real: { c, ref, clock } }), list);
        faults += model.faults;
        await c.close();
      }),
      { numRuns: 200 },
    );
    recordFigure('model-based asyncModelRun', { runs, steps, faults, ms: Date.now() - started });
  });

  it('finds a planted bug: a complete without the fencing check is caught and shrunk', async () => {
    // The same commands against a coordinator whose complete skips the fence (writes as whoever asks).
    const clock = { now: 1_800_000_000_000 };
    const c = createIoredisCoordinator({ client: raw, prefix: PREFIX, clock: () => clock.now, commandTimeoutMs: 5000 });
    const broken = {
      ...c,
      readMeta: c.readMeta,
      readResult: c.readResult,
      async complete(fence: Fence, input: { result: string; resultTtlMs: number }) {
        const meta = await c.readMeta(fence);
        if (!meta) return c.complete(fence, input);
        return c.complete({ ...fence, ownerId: meta.ownerId, ownerToken: meta.ownerToken, epoch: meta.epoch }, input);
      },
    } as typeof c;
    const result = await fc.check(
      fc.asyncProperty(fc.commands(commandArbs, { maxCommands: 40 }), async (cmds) => {
        clock.now += 1_000_000;
        await raw.flushall();
        const ref = { stage: 'planted', key: `k-${randomUUID()}` };
        const model: Model = { record: null, fences: [], joined: [], highest: 0, succeeded: undefined, faults: 0 };
        await fc.asyncModelRun(() => ({ model, real: { c: broken, ref, clock } }), cmds);
      }),
      { numRuns: 500, seed: 42 },
    );
    await c.close();
    expect(result.failed).toBe(true);
    const counterexample = [...(result.counterexample?.[0] ?? [])].map(String).join(', ');
    expect(counterexample).toMatch(/complete/);
    recordFigure('model-based planted fencing bug', { found: result.failed, shrunkTo: counterexample, numShrinks: result.numShrinks });
  });
});

describe('model-based: promise orderings (scheduledModelRun)', () => {
  interface SModel {
    fences: (Fence | undefined)[];
  }
  interface Log {
    op: string;
    node: number;
    ok: boolean;
    fence?: Fence;
    meta: FlightMeta | null;
    granted?: boolean;
  }
  interface SReal {
    c: ReturnType<typeof createIoredisCoordinator>;
    ref: FlightRef;
    clock: { now: number };
    log: Log[];
    inflight: Promise<unknown>[];
    s: fc.Scheduler;
  }
  type SCmd = fc.AsyncCommand<SModel, SReal, false>;

  /** Fires `op` when the scheduler releases it; the reply is appended to the log in execution order. */
  // Each simulated node is sequential (its next call starts after its previous reply); across nodes,
  // the scheduler picks which node's next call goes out first.
  const fire = (r: SReal, node: number, label: string, op: () => Promise<Omit<Log, 'op'>>) => {
    const previous = r.inflight[node] ?? Promise.resolve();
    r.inflight[node] = previous
      .then(() => r.s.schedule(Promise.resolve(label), label))
      .then(op)
      .then((entry) => {
        r.log.push({ op: label, ...entry });
      });
  };

  const sAcquire = (node: number): SCmd => ({
    check: () => true,
    async run(m, r) {
      const clockAt = r.clock.now;
      fire(r, node, `acquire(${node})`, async () => {
        const reply = await r.c.acquire({ ...r.ref, ...LEASE, ownerId: NODES[node]!, ownerToken: randomUUID() });
        const owner = reply.outcome === 'OWNER_NEW' || reply.outcome === 'OWNER_TAKEOVER';
        const fence = owner
          ? { ...r.ref, ownerId: reply.meta.ownerId, ownerToken: reply.meta.ownerToken, epoch: reply.meta.epoch }
          : undefined;
        if (fence) m.fences[node] = fence;
        void clockAt;
        return { node, ok: owner, fence, meta: reply.meta, granted: owner };
      });
    },
    toString: () => `acquire(${node})`,
  });

  const sWrite = (kind: 'markRunning' | 'heartbeat' | 'complete', node: number): SCmd => ({
    check: () => true,
    async run(m, r) {
      fire(r, node, `${kind}(${node})`, async () => {
        // The fence this node holds when the scheduler releases the write (maybe stale, maybe none).
        const fence = m.fences[node] ?? { ...r.ref, ownerId: NODES[node]!, ownerToken: 'none', epoch: 0 };
        const reply =
          kind === 'complete'
            ? await r.c.complete(fence, { result: `from-${node}@${fence.epoch}`, resultTtlMs: 3_600_000 })
            : await r.c[kind](fence, LEASE);
        return { node, ok: reply.ok, fence, meta: reply.ok ? reply.meta : null };
      });
    },
    toString: () => `${kind}(${node})`,
  });

  const sAdvance = (ms: number): SCmd => ({
    check: () => true,
    async run(_m, r) {
      r.clock.now += ms;
    },
    toString: () => `advance(${ms})`,
  });

  it('never lets two owners of one epoch, or a stale owner, write under any reply ordering', async () => {
    const started = Date.now();
    let runs = 0;
    let granted = 0;
    let refused = 0;
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.commands(
          [
            node.map(sAcquire),
            fc
              .tuple(fc.constantFrom('markRunning' as const, 'heartbeat' as const, 'complete' as const), node)
              .map(([k, n]) => sWrite(k, n)),
            fc.constantFrom(1, 1500, 3001).map(sAdvance),
          ],
          { maxCommands: 25 },
        ),
        async (s, cmds) => {
          runs++;
          const clock = { now: 1_900_000_000_000 + runs * 1_000_000 };
          const c = createIoredisCoordinator({ client: raw, prefix: PREFIX, clock: () => clock.now, commandTimeoutMs: 5000 });
          const real: SReal = { c, ref: { stage: 'sched', key: `k-${randomUUID()}` }, clock, log: [], inflight: [], s };
          await fc.scheduledModelRun(s, () => ({ model: { fences: [] } as SModel, real }), cmds);
          let done = false;
          const all = Promise.all(real.inflight).finally(() => {
            done = true;
          });
          while (!done) {
            await s.waitAll();
            await sleep(1);
          }
          await all;
          await c.close();
          // The log is in execution order (one pipelined connection). Replay it: each accepted write must
          // come from the latest granted owner; epochs grow; one success per flight, never changed.
          let current: Fence | undefined;
          let epoch = 0;
          let succeededEpoch: number | undefined;
          for (const entry of real.log) {
            if (entry.granted) {
              expect(entry.meta!.epoch).toBeGreaterThan(epoch);
              epoch = entry.meta!.epoch;
              current = entry.fence;
              granted++;
              expect(succeededEpoch, 'no new owner while a success is stored').toBeUndefined();
            } else if (entry.op.startsWith('acquire') && entry.meta) {
              expect(entry.meta.epoch).toBe(epoch);
            } else if (entry.ok) {
              accepted++;
              expect(entry.fence).toEqual(current);
              if (entry.op.startsWith('complete')) {
                if (succeededEpoch !== undefined) expect(entry.fence!.epoch, 'idempotent re-complete only').toBe(succeededEpoch);
                succeededEpoch = entry.fence!.epoch;
              }
            } else {
              refused++;
            }
          }
        },
      ),
      { numRuns: 150 },
    );
    recordFigure('model-based scheduledModelRun', { runs, granted, accepted, refusedStaleWrites: refused, ms: Date.now() - started });
    expect(refused).toBeGreaterThan(0);
    expect(accepted).toBeGreaterThan(0);
  });
});
