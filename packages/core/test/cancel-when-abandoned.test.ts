/**
 * `ExecuteOptions.cancelWhenAbandoned`: a run is cancelled cluster-wide once every caller of it on its
 * node has left and no other node waits for it; while anybody still wants its outcome it goes on. Two
 * nodes (two SingleFlight instances) on one memory coordinator.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryCoordinator, createSingleFlight, FlightAbortedError, type FlightContext, type SingleFlight } from '@flight/core';

const created: SingleFlight[] = [];
afterEach(async () => {
  await Promise.all(created.splice(0).map((sf) => sf.close()));
});

function nodes() {
  const coordinator = createMemoryCoordinator();
  const node = (nodeId: string) => {
    const sf = createSingleFlight({
      mode: 'distributed',
      coordinator,
      nodeId,
      defaults: { l1: { enabled: false }, guard: { retry: false }, pollIntervalMs: 50 },
    });
    created.push(sf);
    return sf;
  };
  return { a: node('a'), b: node('b'), coordinator };
}

/** A supplier that answers after `ms` unless its run's signal aborts first (then it records why). */
function slow(ms: number) {
  const runs: { aborted: unknown }[] = [];
  return {
    runs,
    supplier: (ctx: FlightContext) => {
      const run = { aborted: undefined as unknown };
      runs.push(run);
      return new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => resolve(`answer ${runs.length}`), ms);
        ctx.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          run.aborted = ctx.signal.reason;
          reject(ctx.signal.reason);
        });
      });
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('cancelWhenAbandoned', () => {
  it('the owner node’s only caller leaves and nobody else waits: the run is cancelled, the next caller runs it again', async () => {
    const { a, b } = nodes();
    const key = randomUUID();
    const work = slow(400);
    const caller = new AbortController();
    const first = a.execute('s', key, work.supplier, { signal: caller.signal, cancelWhenAbandoned: true });
    await sleep(50);
    caller.abort();
    await expect(first).rejects.toBeInstanceOf(FlightAbortedError);
    await sleep(30);
    expect(work.runs).toHaveLength(1);
    expect(work.runs[0]!.aborted).toMatchObject({ code: 'E_FLIGHT_CANCELLED' });
    // A later caller, on any node, starts a new run rather than getting the cancellation.
    await expect(b.execute('s', key, work.supplier)).resolves.toMatchObject({ role: 'owner', value: 'answer 2' });
  });

  it('goes on while a caller of its node still waits, or a caller of another node does', async () => {
    const { a, b } = nodes();
    const work = slow(200);
    // Another caller of the owner's node, without a signal.
    const key = randomUUID();
    const leaving = new AbortController();
    const owner = a.execute('s', key, work.supplier, { signal: leaving.signal, cancelWhenAbandoned: true });
    await sleep(20);
    const stays = a.execute('s', key, work.supplier);
    await sleep(20);
    leaving.abort();
    await expect(owner).rejects.toBeInstanceOf(FlightAbortedError);
    await expect(stays).resolves.toMatchObject({ role: 'follower', value: 'answer 1' });
    // A follower on another node.
    const other = randomUUID();
    const leaving2 = new AbortController();
    const owner2 = a.execute('s', other, work.supplier, { signal: leaving2.signal, cancelWhenAbandoned: true });
    await sleep(20);
    const remote = b.execute('s', other, work.supplier);
    await sleep(60);
    leaving2.abort();
    await expect(owner2).rejects.toBeInstanceOf(FlightAbortedError);
    await expect(remote).resolves.toMatchObject({ role: 'follower', value: 'answer 2' });
    expect(work.runs.map((r) => r.aborted)).toEqual([undefined, undefined]);
  });

  it('without it, a run every caller left finishes and its answer is kept for later callers', async () => {
    const { a, b } = nodes();
    const key = randomUUID();
    const work = slow(100);
    const caller = new AbortController();
    const first = a.execute('s', key, work.supplier, { signal: caller.signal });
    await sleep(20);
    caller.abort();
    await expect(first).rejects.toBeInstanceOf(FlightAbortedError);
    await sleep(150);
    await expect(b.execute('s', key, work.supplier)).resolves.toMatchObject({ role: 'replay', value: 'answer 1' });
    expect(work.runs).toHaveLength(1);
  });

  it('a streamed run whose readers all left is cancelled too', async () => {
    const { a } = nodes();
    const key = randomUUID();
    let aborted: unknown;
    const caller = new AbortController();
    const stream = a.executeStream<string>(
      's',
      key,
      async function* (ctx) {
        ctx.signal.addEventListener('abort', () => (aborted = ctx.signal.reason));
        for (let i = 0; i < 100 && !ctx.signal.aborted; i++) {
          yield `chunk ${i}`;
          await sleep(10);
        }
      },
      { signal: caller.signal, cancelWhenAbandoned: true },
    );
    const read: string[] = [];
    await expect(
      (async () => {
        for await (const chunk of stream) {
          read.push(chunk);
          if (read.length === 3) caller.abort();
        }
      })(),
    ).rejects.toBeInstanceOf(FlightAbortedError);
    await sleep(50);
    expect(aborted).toMatchObject({ code: 'E_FLIGHT_CANCELLED' });
  });
});
