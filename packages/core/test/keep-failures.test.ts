/**
 * `ExecuteOptions.keepFailures: false`: a failure that concerns its run only (an HTTP response that may
 * not be shared). The guard does not retry the supplier, and the failure is recorded retryable whatever
 * its type: the callers of that run get it, the next caller of the key runs the supplier again.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryCoordinator, createSingleFlight, type SingleFlight } from '@flight/core';

const created: SingleFlight[] = [];
afterEach(async () => {
  await Promise.all(created.splice(0).map((sf) => sf.close()));
});

/** A stage whose guard retries (3 attempts) and whose failures are replayed for a minute. */
const RETRYING = {
  guard: { retry: { maxAttempts: 3, initialDelayMs: 1, maxDelayMs: 1 }, circuitBreaker: false as const },
  failureTtlMs: 60_000,
  l1: { enabled: false },
};

function failing() {
  let runs = 0;
  return {
    runs: () => runs,
    supplier: async () => {
      runs++;
      // A PROVIDER failure: retryable by the stage's default rules, so the guard would retry it.
      throw Object.assign(new Error('not for sharing'), { status: 502 });
    },
  };
}

describe('keepFailures: false', () => {
  it('the guard does not retry the supplier, and the next caller of the key runs it again', async () => {
    const sf = createSingleFlight({ mode: 'distributed', coordinator: createMemoryCoordinator(), defaults: RETRYING });
    created.push(sf);
    const key = randomUUID();
    const supplier = failing();
    await expect(sf.execute('transient', key, supplier.supplier, { keepFailures: false })).rejects.toMatchObject({
      retryable: true,
      replayed: false,
    });
    expect(supplier.runs()).toBe(1);
    await expect(sf.execute('transient', key, supplier.supplier, { keepFailures: false })).rejects.toMatchObject({ replayed: false });
    expect(supplier.runs()).toBe(2);
  });

  it('records a failure retryable whatever its type (a plain Error is UNEXPECTED, replayed without the option)', async () => {
    const sf = createSingleFlight({ mode: 'distributed', coordinator: createMemoryCoordinator(), defaults: RETRYING });
    created.push(sf);
    let runs = 0;
    const supplier = async () => {
      runs++;
      throw new Error('plain');
    };
    const kept = randomUUID();
    await expect(sf.execute('transient', kept, supplier)).rejects.toMatchObject({ errorType: 'UNEXPECTED', retryable: false });
    await expect(sf.execute('transient', kept, supplier)).rejects.toMatchObject({ replayed: true });
    expect(runs).toBe(1);
    const notKept = randomUUID();
    await expect(sf.execute('transient', notKept, supplier, { keepFailures: false })).rejects.toMatchObject({
      errorType: 'UNEXPECTED',
      retryable: true,
    });
    await expect(sf.execute('transient', notKept, supplier, { keepFailures: false })).rejects.toMatchObject({ replayed: false });
    expect(runs).toBe(3);
  });

  it('callers on other nodes that followed the run get its failure: nobody takes it over to run it again, one node after another', async () => {
    const coordinator = createMemoryCoordinator();
    const nodes = ['a', 'b', 'c'].map((nodeId) => {
      const sf = createSingleFlight({ mode: 'distributed', coordinator, nodeId, defaults: { ...RETRYING, pollIntervalMs: 50 } });
      created.push(sf);
      return sf;
    });
    const key = randomUUID();
    let runs = 0;
    const supplier = async () => {
      runs++;
      await new Promise((resolve) => setTimeout(resolve, 100));
      throw Object.assign(new Error('not for sharing'), { status: 502 });
    };
    const outcomes = await Promise.all(
      nodes.map((sf) =>
        sf.execute('transient', key, supplier, { keepFailures: false }).then(
          () => 'ok',
          (error: { replayed?: boolean }) => error.replayed,
        ),
      ),
    );
    // One run; the two followers got its failure (replayed), none ran the supplier itself.
    expect(runs).toBe(1);
    expect(outcomes.sort()).toEqual([false, true, true]);
    // The next caller runs the supplier again.
    await expect(nodes[0]!.execute('transient', key, supplier, { keepFailures: false })).rejects.toMatchObject({ replayed: false });
    expect(runs).toBe(2);
  });

  it('atMostOnce wins: the failure is kept and the supplier is not run again', async () => {
    const sf = createSingleFlight({ mode: 'distributed', coordinator: createMemoryCoordinator(), defaults: RETRYING });
    created.push(sf);
    const key = randomUUID();
    const supplier = failing();
    await expect(sf.execute('transient', key, supplier.supplier, { keepFailures: false, atMostOnce: true })).rejects.toMatchObject({
      retryable: false,
    });
    await expect(sf.execute('transient', key, supplier.supplier, { keepFailures: false, atMostOnce: true })).rejects.toMatchObject({
      replayed: true,
    });
    expect(supplier.runs()).toBe(1);
  });

  it('executeStream takes it too: a streamed run that failed is not replayed to the next caller, who runs it again', async () => {
    const sf = createSingleFlight({ mode: 'distributed', coordinator: createMemoryCoordinator(), defaults: RETRYING });
    created.push(sf);
    let runs = 0;
    async function* chunks() {
      runs++;
      yield 'head';
      throw new Error('plain');
    }
    const read = async (options: { keepFailures?: boolean }) => {
      for await (const chunk of sf.executeStream('transient', key, chunks, options)) void chunk;
    };
    let key = randomUUID();
    await expect(read({})).rejects.toMatchObject({ errorType: 'UNEXPECTED' });
    await expect(read({})).rejects.toMatchObject({ replayed: true });
    expect(runs).toBe(1);
    key = randomUUID();
    await expect(read({ keepFailures: false })).rejects.toMatchObject({ errorType: 'UNEXPECTED', retryable: true });
    await expect(read({ keepFailures: false })).rejects.toMatchObject({ replayed: false });
    expect(runs).toBe(3);
  });
});
