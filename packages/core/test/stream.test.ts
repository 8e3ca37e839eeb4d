import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createMemoryCoordinator,
  createSingleFlight,
  FlightExecutionError,
  FlightStreamExpiredError,
  FlightStreamInterruptedError,
  FlightStreamRestart,
  FlightStreamUnsupportedError,
  FlightValidationError,
  FlightWaitTimeoutError,
  type FlightMode,
  type SingleFlight,
  type StagePolicyInput,
  type StreamChunk,
} from '@flight/core';
import { type FlightCoordinator } from '@flight/core/adapter';

const FAST: StagePolicyInput = {
  heartbeatIntervalMs: 500,
  takeoverAfterMs: 800,
  pollIntervalMs: 50,
  l1: { enabled: false },
  guard: { retry: false, circuitBreaker: false, timeoutMs: 0 },
};
const instances: SingleFlight[] = [];

function node(coordinator: FlightCoordinator | undefined, mode: FlightMode = 'distributed', nodeId = randomUUID()): SingleFlight {
  const flight = createSingleFlight({ coordinator, mode, nodeId, defaults: FAST, telemetry: false });
  instances.push(flight);
  return flight;
}

afterEach(async () => {
  await Promise.all(instances.splice(0).map((f) => f.close()));
});

/** A supplier of `n` text chunks, `gapMs` apart, counting its runs. */
function tokens(n: number, gapMs: number, runs = { count: 0 }) {
  const supplier = async function* () {
    runs.count++;
    for (let i = 0; i < n; i++) {
      if (gapMs > 0) await sleep(gapMs);
      yield `t${i}`;
    }
  };
  return { supplier, runs };
}

async function collect<C>(stream: AsyncIterable<C>, onChunk?: (chunk: C, at: number) => void): Promise<C[]> {
  const out: C[] = [];
  for await (const chunk of stream) {
    out.push(chunk);
    onChunk?.(chunk, Date.now());
  }
  return out;
}

const expected = (n: number) => Array.from({ length: n }, (_, i) => `t${i}`);

describe('executeStream', () => {
  for (const mode of ['local', 'hybrid', 'distributed'] as const) {
    it(`${mode}: concurrent callers on one node share one run and receive the same chunks in order`, async () => {
      const flight = node(mode === 'local' ? undefined : createMemoryCoordinator(), mode);
      const { supplier, runs } = tokens(20, 2);
      const key = randomUUID();
      const all = await Promise.all(Array.from({ length: 10 }, () => collect(flight.executeStream('s', key, supplier))));
      expect(runs.count).toBe(1);
      for (const chunks of all) expect(chunks).toEqual(expected(20));
    });
  }

  for (const mode of ['local', 'distributed'] as const) {
    it(`${mode}: a caller never sees another caller's change to a chunk (JSON frozen, bytes copied per caller)`, async () => {
      const coordinator = mode === 'local' ? undefined : createMemoryCoordinator();
      // Two callers on the owner's node (its run pushes the chunks) and, distributed, two on a follower's (read from the coordinator).
      const nodes = mode === 'local' ? [node(coordinator, mode)] : [node(coordinator, mode), node(coordinator, mode)];
      const key = randomUUID();
      const supplier = async function* (): AsyncGenerator<StreamChunk> {
        for (let i = 0; i < 3; i++) {
          await sleep(20);
          yield { n: i, tags: ['x'] };
          yield new Uint8Array([i, i, i]);
        }
      };
      const mutating = async (at: SingleFlight) => {
        const rejected: string[] = [];
        for await (const chunk of at.executeStream('s', key, supplier)) {
          if (chunk instanceof Uint8Array) chunk.fill(255);
          else {
            try {
              (chunk as { n: number }).n = 99;
            } catch (error) {
              rejected.push((error as Error).name);
            }
            try {
              (chunk as { tags: string[] }).tags.push('mutated');
            } catch (error) {
              rejected.push((error as Error).name);
            }
          }
        }
        return rejected;
      };
      const perNode = await Promise.all(
        nodes.map((at) =>
          Promise.all([mutating(at), collect(at.executeStream('s', key, supplier)), at.executeStream('s', key, supplier).result()]),
        ),
      );
      const original = [0, 1, 2].flatMap((i) => [{ n: i, tags: ['x'] }, new Uint8Array([i, i, i])]);
      for (const [rejected, other, viaResult] of perNode) {
        expect(rejected).toEqual(Array(6).fill('TypeError'));
        expect(other).toEqual(original);
        expect(viaResult.value).toEqual(original);
      }
    });
  }

  for (const mode of ['local', 'distributed'] as const) {
    it(`${mode}: a stream of exactly its byte cap completes, and is replayed (the stored list's brackets and commas are not counted against it)`, async () => {
      const coordinator = mode === 'local' ? undefined : createMemoryCoordinator();
      const policy = { ...FAST, maxResultBytes: 1000, l1: { enabled: false } };
      const nodes = [0, 1].map(() => {
        const flight = createSingleFlight({ coordinator, mode, nodeId: randomUUID(), defaults: policy, telemetry: false });
        instances.push(flight);
        return flight;
      });
      const key = randomUUID();
      // Ten chunks of 100 encoded bytes each (JSON strings: 98 characters and their quotes): 1000 bytes.
      const supplier = async function* () {
        for (let i = 0; i < 10; i++) yield String(i).repeat(98);
      };
      const owner = await nodes[0]!.executeStream('s', key, supplier).result();
      expect(owner.value).toHaveLength(10);
      expect(owner.role).toBe(mode === 'local' ? 'local' : 'owner');
      if (mode === 'distributed') {
        const replay = await nodes[1]!.executeStream('s', key, supplier).result();
        expect(replay).toMatchObject({ role: 'replay', value: owner.value });
      }
      // One byte more is over the cap: refused while streaming, with the stream's typed error.
      const over = async function* () {
        yield* supplier();
        yield 'x';
      };
      await expect(nodes[0]!.executeStream('s', randomUUID(), over).result()).rejects.toMatchObject({ errorCode: 'E_FLIGHT_STREAM_LIMIT' });
    });
  }

  it('is lazy: nothing runs until the stream is iterated or result() is called', async () => {
    const flight = node(undefined, 'local');
    const { supplier, runs } = tokens(3, 0);
    const stream = flight.executeStream('s', randomUUID(), supplier);
    await sleep(20);
    expect(runs.count).toBe(0);
    const result = await stream.result();
    expect(runs.count).toBe(1);
    expect(result.value).toEqual(expected(3));
    expect(result.role).toBe('local');
  });

  it('followers on another node receive the chunks live, before the owner finished, and replay after completion without a run', async () => {
    const coordinator = createMemoryCoordinator();
    const [a, b] = [node(coordinator), node(coordinator)];
    const { supplier, runs } = tokens(10, 30);
    const key = randomUUID();
    const owner = a.executeStream('s', key, supplier);
    const ownerChunks = collect(owner);
    await sleep(50);
    let firstAt = 0;
    const follower = b.executeStream('s', key, supplier);
    const followerChunks = await collect(follower, (_, at) => (firstAt ||= at));
    const finishedAt = Date.now();
    expect(await ownerChunks).toEqual(expected(10));
    expect(followerChunks).toEqual(expected(10));
    expect(finishedAt - firstAt).toBeGreaterThan(150);
    expect((await follower.result()).role).toBe('follower');
    expect((await owner.result()).role).toBe('owner');
    expect(runs.count).toBe(1);
    // After completion: replayed from the stored chunk list, on either node, without a run.
    const replay = b.executeStream('s', key, supplier);
    expect(replay.epoch).toBeUndefined();
    expect(await collect(replay)).toEqual(expected(10));
    expect((await replay.result()).role).toBe('replay');
    expect(replay.epoch).toBe((await owner.result()).epoch);
    expect(follower.epoch).toBe((await owner.result()).epoch);
    expect(runs.count).toBe(1);
    // `execute` on the same key replays the stored chunk list as an array.
    expect((await a.execute('s', key, () => ['not run'])).value).toEqual(expected(10));
  });

  it('a caller joining after 60 % of the chunks catches up from the first one', async () => {
    const coordinator = createMemoryCoordinator();
    const [a, b] = [node(coordinator), node(coordinator)];
    let emitted = 0;
    const key = randomUUID();
    const supplier = async function* () {
      for (let i = 0; i < 10; i++) {
        await sleep(20);
        emitted++;
        yield `t${i}`;
      }
    };
    const owner = collect(a.executeStream('s', key, supplier));
    while (emitted < 6) await sleep(5);
    const late = await collect(b.executeStream('s', key, supplier));
    expect(late).toEqual(expected(10));
    expect(await owner).toEqual(expected(10));
  });

  it('carries strings, bytes and JSON values, the same for owner, followers and replays', async () => {
    const coordinator = createMemoryCoordinator();
    const [a, b] = [node(coordinator), node(coordinator)];
    const chunks: StreamChunk[] = ['text', new Uint8Array([0, 1, 255]), { delta: 'x', n: 1 }, [1, 'two'], null, 7, { $bytes: 'not bytes' }];
    const key = randomUUID();
    const supplier = async function* () {
      for (const chunk of chunks) {
        await sleep(10);
        yield chunk;
      }
    };
    const [owner, follower] = await Promise.all([
      collect(a.executeStream('s', key, supplier)),
      sleep(5).then(() => collect(b.executeStream('s', key, supplier))),
    ]);
    const replay = await collect(b.executeStream('s', key, supplier));
    for (const got of [owner, follower, replay]) expect(got).toEqual(chunks);
    expect(follower[1]).toBeInstanceOf(Uint8Array);
  });

  it('chunks produced within batchMs go to the coordinator in one append; followers still get each chunk', async () => {
    const coordinator = createMemoryCoordinator();
    const appends: number[] = [];
    const append = coordinator.appendStream.bind(coordinator);
    let appended!: () => void;
    const firstAppend = new Promise<void>((resolve) => (appended = resolve));
    coordinator.appendStream = (fence, input) => {
      appends.push(input.chunks.length);
      const reply = append(fence, input);
      // Once the owner has taken the reply (a macrotask later), the supplier goes on.
      void reply.then(() => setImmediate(appended));
      return reply;
    };
    const [a, b] = [node(coordinator), node(coordinator)];
    const key = randomUUID();
    // 30 chunks at once, then 20 more at once after the first append was answered.
    const supplier = async function* () {
      for (let i = 0; i < 50; i++) {
        if (i === 30) await firstAppend;
        yield `t${i}`;
      }
    };
    const owner = collect(a.executeStream('s', key, supplier, { batchMs: 5 }));
    const follower = collect(b.executeStream('s', key, supplier));
    expect(await follower).toEqual(expected(50));
    expect(await owner).toEqual(expected(50));
    expect(appends).toEqual([30, 20]);
  });

  it('a follower node reads the coordinator only while a caller waits for more: a paused consumer costs no reads', async () => {
    const coordinator = createMemoryCoordinator();
    let reads = 0;
    const readStream = coordinator.readStream.bind(coordinator);
    coordinator.readStream = (ref, input) => {
      reads++;
      return readStream(ref, input);
    };
    const [a, b] = [node(coordinator), node(coordinator)];
    const key = randomUUID();
    const { supplier } = tokens(20, 10);
    const owner = collect(a.executeStream('s', key, supplier));
    const iterator = b.executeStream('s', key, supplier)[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toBe('t0');
    // The consumer pauses while the owner streams the rest: its node stops reading.
    await sleep(30);
    const readsWhenPaused = reads;
    await owner;
    expect(reads - readsWhenPaused).toBeLessThanOrEqual(1);
    const rest: unknown[] = [];
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) rest.push(next.value);
    expect(['t0', ...rest]).toEqual(expected(20));
  });

  it('a run past its cap fails with E_FLIGHT_STREAM_LIMIT for every caller', async () => {
    const flight = node(createMemoryCoordinator());
    const { supplier } = tokens(10, 0);
    const error = await flight
      .executeStream('s', randomUUID(), supplier, { maxChunks: 5 })
      .result()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FlightExecutionError);
    expect((error as FlightExecutionError).errorCode).toBe('E_FLIGHT_STREAM_LIMIT');
  });

  it('bad input is a typed error; a coordinator without the extension is refused with E_FLIGHT_STREAM_UNSUPPORTED', async () => {
    const memory = createMemoryCoordinator();
    const { appendStream: _a, readStream: _r, waitForStream: _w, ...plain } = memory;
    const flight = node(plain as FlightCoordinator);
    expect(() => flight.executeStream('s', 'k', tokens(1, 0).supplier)).toThrow(FlightStreamUnsupportedError);
    const local = node(undefined, 'local');
    expect(() => local.executeStream('s', 'k', tokens(1, 0).supplier, { onRestart: 'later' as 'error' })).toThrow(FlightValidationError);
    const notIterable = local.executeStream('s', randomUUID(), (() => 42) as never);
    await expect(notIterable.result()).rejects.toMatchObject({ errorCode: 'E_FLIGHT_VALIDATION' });
    await memory.close();
  });

  it("waitTimeoutMs bounds a follower's wait for progress, not its whole stream: chunks keep it going; a stall past it ends it with FlightWaitTimeoutError", async () => {
    const coordinator = createMemoryCoordinator();
    const withWait = () => {
      const flight = createSingleFlight({
        coordinator,
        mode: 'distributed',
        nodeId: randomUUID(),
        defaults: { ...FAST, waitTimeoutMs: 400 },
        telemetry: false,
      });
      instances.push(flight);
      return flight;
    };
    const [a, b] = [withWait(), withWait()];
    // 12 chunks 80 ms apart: the stream lasts ~2.4 × waitTimeoutMs.
    const steady = randomUUID();
    const { supplier } = tokens(12, 80);
    const owner = collect(a.executeStream('s', steady, supplier));
    await sleep(5);
    const followers = await Promise.all(Array.from({ length: 3 }, () => collect(b.executeStream('s', steady, supplier))));
    for (const chunks of followers) expect(chunks).toEqual(expected(12));
    expect(await owner).toEqual(expected(12));
    // A run that stalls for longer than waitTimeoutMs after its first chunks.
    const stalled = randomUUID();
    const stalling = async function* () {
      yield 't0';
      await sleep(1000);
      yield 't1';
    };
    const stalledOwner = collect(a.executeStream('s', stalled, stalling));
    await sleep(5);
    const got: unknown[] = [];
    const error = await collect(b.executeStream('s', stalled, stalling), (chunk) => got.push(chunk)).catch((e: unknown) => e);
    expect(got).toEqual(['t0']);
    expect(error).toBeInstanceOf(FlightWaitTimeoutError);
    expect(await stalledOwner).toEqual(['t0', 't1']);
  });

  it("memory coordinator: a reading node learns of a takeover when it happens, not at its next poll or the new run's first chunk", async () => {
    const coordinator = createMemoryCoordinator();
    const slowPoll = (nodeId: string) => {
      const flight = createSingleFlight({
        coordinator,
        mode: 'distributed',
        nodeId,
        defaults: { ...FAST, pollIntervalMs: 600_000 },
        telemetry: false,
      });
      instances.push(flight);
      return flight;
    };
    // Node B polls often (it takes the run over); node C polls every 10 min, and the new run's first chunk
    // waits until C's read has ended: only the takeover's notice can end it.
    const [a, b, c] = [node(coordinator), node(coordinator), slowPoll('c')];
    const key = randomUUID();
    let runs = 0;
    let cEnded!: () => void;
    const afterCEnded = new Promise<void>((resolve) => (cEnded = resolve));
    const supplier = async function* (ctx: { signal: AbortSignal }) {
      const run = ++runs;
      if (run === 2) await afterCEnded;
      for (let i = 0; i < 3; i++) {
        if (run === 1 && i === 2)
          await new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason as Error)));
        yield `r${run}-${i}`;
      }
    };
    void collect(a.executeStream('s', key, supplier)).catch(() => undefined);
    await sleep(5);
    const taker = b
      .executeStream('s', key, supplier)
      .result()
      .catch(() => undefined);
    const got: unknown[] = [];
    const read = (async () => {
      for await (const chunk of c.executeStream('s', key, supplier)) got.push(chunk);
    })().catch((e: unknown) => e);
    while (got.length < 2) await sleep(5);
    await a.close();
    const ended = await read;
    cEnded();
    expect(got).toEqual(['r1-0', 'r1-1']);
    expect(ended).toBeInstanceOf(FlightStreamInterruptedError);
    await taker;
    expect(runs).toBe(2);
  });

  describe('resume (after)', () => {
    it('a caller that read 3 chunks on one node continues on another from chunk 3, during the run and after it, with one run', async () => {
      const coordinator = createMemoryCoordinator();
      const [a, b, c] = [node(coordinator), node(coordinator), node(coordinator)];
      const { supplier, runs } = tokens(8, 25);
      const key = randomUUID();
      const first = a.executeStream('s', key, supplier);
      const got: unknown[] = [];
      for await (const chunk of first) {
        got.push(chunk);
        if (got.length === 3) break; // the client went away
      }
      const position = { epoch: first.epoch, index: got.length };
      expect(position.epoch).toEqual(expect.any(Number));
      const resumed = b.executeStream('s', key, supplier, { after: position });
      expect(await collect(resumed)).toEqual(expected(8).slice(3));
      expect(resumed.epoch).toBe(position.epoch);
      const afterRun = c.executeStream('s', key, supplier, { after: { ...position, index: 6 } });
      expect(await collect(afterRun)).toEqual(expected(8).slice(6));
      expect((await afterRun.result()).role).toBe('replay');
      expect(runs.count).toBe(1);
    });

    it('a stream that is gone fails with E_FLIGHT_STREAM_EXPIRED without running anything, and the failure is not kept', async () => {
      const coordinator = createMemoryCoordinator();
      const [a, b] = [node(coordinator), node(coordinator)];
      const { supplier, runs } = tokens(3, 0);
      const key = randomUUID();
      const gone = b.executeStream('s', key, supplier, { after: { epoch: 42, index: 2 } });
      const error = await collect(gone).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(FlightExecutionError);
      expect((error as FlightExecutionError).cause).toBeInstanceOf(FlightStreamExpiredError);
      expect(runs.count).toBe(0);
      expect(await collect(a.executeStream('s', key, supplier))).toEqual(expected(3));
      expect(runs.count).toBe(1);
    });

    it('a position in a run that was replaced gives the restart marker, then the new run', async () => {
      const coordinator = createMemoryCoordinator();
      const [a, b] = [node(coordinator), node(coordinator)];
      const { supplier } = tokens(4, 0);
      const key = randomUUID();
      const first = a.executeStream('s', key, supplier);
      await collect(first);
      const stale = { epoch: first.epoch! - 1, index: 2 };
      const restarted = await collect(b.executeStream('s', key, supplier, { after: stale, onRestart: 'restart' }));
      expect(restarted[0]).toBeInstanceOf(FlightStreamRestart);
      expect(restarted.slice(1)).toEqual(expected(4));
      const refused = await collect(b.executeStream('s', key, supplier, { after: stale })).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(FlightStreamInterruptedError);
    });

    it('refuses a position that is not one', () => {
      const flight = node(createMemoryCoordinator());
      for (const after of [{ epoch: 1, index: -1 }, { epoch: 1.5, index: 0 }, null] as never[])
        expect(() => flight.executeStream('s', 'k', tokens(1, 0).supplier, { after })).toThrow(FlightValidationError);
    });
  });

  describe('takeover mid-stream', () => {
    /**
     * Node A owns a run that stops after 3 chunks and dies (closed: its run is abandoned); node B takes it
     * over. A caller on B iterates from the start; a caller on node C joined the run but read no chunk yet.
     */
    async function takeover(onRestart: 'error' | 'restart') {
      const coordinator = createMemoryCoordinator();
      const [a, b, c] = [node(coordinator), node(coordinator), node(coordinator)];
      const key = randomUUID();
      let runs = 0;
      const supplier = async function* (ctx: { signal: AbortSignal }) {
        const run = ++runs;
        for (let i = 0; i < 6; i++) {
          if (run === 1 && i === 3)
            await new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason as Error)));
          await sleep(10);
          yield `r${run}-${i}`;
        }
      };
      const owner = collect(a.executeStream('s', key, supplier)).catch((e: unknown) => e);
      await sleep(5);
      const idle = c.executeStream('s', key, supplier, { onRestart });
      const idleJoined = idle.result();
      const reader = b.executeStream('s', key, supplier, { onRestart });
      const got: unknown[] = [];
      const epochs: (number | undefined)[] = [];
      const read = (async () => {
        for await (const chunk of reader) {
          got.push(chunk);
          epochs.push(reader.epoch);
        }
      })().catch((e: unknown) => e);
      while (got.length < 3) await sleep(5);
      await a.close();
      const ended = await read;
      await idleJoined;
      return { got, epochs, ended, idle: await collect(idle), owner: await owner, runs: () => runs };
    }

    it("onRestart 'error': a caller that received chunks ends with FlightStreamInterruptedError; one that received none follows the new run", async () => {
      const { got, ended, idle, runs } = await takeover('error');
      expect(got).toEqual(['r1-0', 'r1-1', 'r1-2']);
      expect(ended).toBeInstanceOf(FlightStreamInterruptedError);
      expect((ended as FlightStreamInterruptedError).code).toBe('E_FLIGHT_STREAM_INTERRUPTED');
      expect(idle).toEqual(['r2-0', 'r2-1', 'r2-2', 'r2-3', 'r2-4', 'r2-5']);
      expect(runs()).toBe(2);
    });

    it("onRestart 'restart': the caller receives a FlightStreamRestart marker, then the new run from its start; its epoch follows", async () => {
      const { got, ended, epochs } = await takeover('restart');
      expect(ended).toBeUndefined();
      expect(got.slice(0, 3)).toEqual(['r1-0', 'r1-1', 'r1-2']);
      expect(got[3]).toBeInstanceOf(FlightStreamRestart);
      const marker = got[3] as FlightStreamRestart;
      expect(marker.epoch).toBeGreaterThan(marker.previousEpoch!);
      expect(got.slice(4)).toEqual(['r2-0', 'r2-1', 'r2-2', 'r2-3', 'r2-4', 'r2-5']);
      // The epoch of the run each chunk came from (what a resumable HTTP stream puts in its event ids).
      expect(epochs.slice(0, 3)).toEqual([marker.previousEpoch, marker.previousEpoch, marker.previousEpoch]);
      expect(epochs.slice(3)).toEqual(Array(7).fill(marker.epoch));
    });
  });
});

describe('resume × runs without a lease (local mode)', () => {
  /** A run that yields `<name>-part1`, `-part2`, waits for `release`, then yields parts 3 and 4. */
  function heldRun(name: string) {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const supplier = async function* () {
      yield `${name}-part1`;
      yield `${name}-part2`;
      await gate;
      yield `${name}-part3`;
      yield `${name}-part4`;
    };
    return { supplier, release };
  }

  it('a caller resuming a run that was replaced gets the restart marker and the new run from its start, never two runs spliced', async () => {
    const flight = node(undefined, 'local');
    const key = randomUUID();
    const run1 = heldRun('run1');
    const first = flight.executeStream('s', key, run1.supplier);
    const read: unknown[] = [];
    for await (const chunk of first) {
      read.push(chunk);
      if (read.length === 2) break;
    }
    const position = { epoch: first.epoch, index: 2 };
    expect(position.epoch).toEqual(expect.any(Number));
    await flight.forget('s', key);
    run1.release();
    const run2 = heldRun('run2');
    const second = flight.executeStream('s', key, run2.supplier);
    const secondDone = collect(second);
    const resumed = flight.executeStream('s', key, run2.supplier, { after: position, onRestart: 'restart' });
    const resumedDone = collect(resumed);
    run2.release();
    expect(await secondDone).toEqual(['run2-part1', 'run2-part2', 'run2-part3', 'run2-part4']);
    const got = await resumedDone;
    expect(got[0]).toBeInstanceOf(FlightStreamRestart);
    expect(got.slice(1)).toEqual(['run2-part1', 'run2-part2', 'run2-part3', 'run2-part4']);
    expect(second.epoch).not.toBe(position.epoch);
  });
});

describe('forget × streamed runs on one node', () => {
  it('a caller that comes after a forget gets the new run only; the callers of the forgotten run read it to its end', async () => {
    const flight = node(undefined, 'local');
    const key = randomUUID();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const streaming = new Promise<void>((resolve) => (started = resolve));
    const old = async function* () {
      yield 'old-1';
      started();
      await gate;
      yield 'old-2';
    };
    const first = collect(flight.executeStream('s', key, old));
    await streaming;
    await flight.forget('s', key);
    const fresh = async function* () {
      yield 'new-1';
      yield 'new-2';
    };
    const second = await collect(flight.executeStream('s', key, fresh, { onRestart: 'restart' }));
    release();
    expect(second).toEqual(['new-1', 'new-2']);
    expect(await first).toEqual(['old-1', 'old-2']);
  });
});
