/**
 * Type tests of the public API (run by vitest's typecheck mode): what `execute` and the `executeStream`
 * overloads give, and which options they take.
 */
import { describe, expectTypeOf, it } from 'vitest';
import {
  createSingleFlight,
  type FlightContext,
  type FlightResult,
  type FlightStream,
  type FlightStreamRestart,
  type StreamChunk,
} from '@flight/core';

const flights = createSingleFlight();
async function* words(): AsyncGenerator<string> {
  yield 'a';
  yield 'b';
}

describe('execute', () => {
  it("resolves a FlightResult of the supplier's value, sync or async", () => {
    expectTypeOf(flights.execute('s', 'k', async () => 42)).toEqualTypeOf<Promise<FlightResult<number>>>();
    expectTypeOf(flights.execute('s', 'k', () => ({ ok: true }))).toEqualTypeOf<Promise<FlightResult<{ ok: boolean }>>>();
    expectTypeOf(flights.execute('s', 'k', (context) => context)).toEqualTypeOf<Promise<FlightResult<FlightContext>>>();
  });

  it('takes resultTtlMs as milliseconds or a function of the value, nothing else', () => {
    void flights.execute('s', 'k', () => 1, { resultTtlMs: 500 });
    void flights.execute('s', 'k', () => 1, { resultTtlMs: (value) => (value === 1 ? 100 : undefined) });
    // @ts-expect-error a string is not a duration
    void flights.execute('s', 'k', () => 1, { resultTtlMs: '500' });
  });
});

describe('executeStream', () => {
  it('streams the chunk type of the supplier by default and with onRestart: error', () => {
    expectTypeOf(flights.executeStream('s', 'k', words)).toEqualTypeOf<FlightStream<string>>();
    expectTypeOf(flights.executeStream('s', 'k', words, { onRestart: 'error' })).toEqualTypeOf<FlightStream<string>>();
  });

  it('adds the restart marker with onRestart: restart, or when the mode is not known statically', () => {
    expectTypeOf(flights.executeStream('s', 'k', words, { onRestart: 'restart' })).toEqualTypeOf<
      FlightStream<string | FlightStreamRestart>
    >();
    const mode = Math.random() > 0.5 ? ('restart' as const) : ('error' as const);
    expectTypeOf(flights.executeStream('s', 'k', words, { onRestart: mode })).toEqualTypeOf<FlightStream<string | FlightStreamRestart>>();
  });

  it('takes resultTtlMs of the chunks, and refuses an unknown onRestart', () => {
    void flights.executeStream('s', 'k', words, {
      resultTtlMs: (chunks) => (expectTypeOf(chunks).toEqualTypeOf<readonly StreamChunk[]>(), 1),
    });
    // @ts-expect-error not a restart mode
    void flights.executeStream('s', 'k', words, { onRestart: 'resume' });
  });
});
