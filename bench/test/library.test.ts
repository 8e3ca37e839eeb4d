import { afterEach, describe, expect, it } from 'vitest';
import { libraryBuild, libraryExecArgv } from '../src/library.js';

const saved = process.env.FLIGHT_BENCH_LIBRARY;
afterEach(() => {
  if (saved === undefined) delete process.env.FLIGHT_BENCH_LIBRARY;
  else process.env.FLIGHT_BENCH_LIBRARY = saved;
});

describe('the packages a bench run measures', () => {
  it('are the built ones when bench.mjs says so: forked processes resolve @flight/* to dist', () => {
    process.env.FLIGHT_BENCH_LIBRARY = 'built';
    expect(libraryBuild()).toBe('built');
    expect(libraryExecArgv()).toEqual([]);
  });

  it('are the sources otherwise (the tests, FLIGHT_BENCH_LIBRARY=source): forked processes get the source condition', () => {
    delete process.env.FLIGHT_BENCH_LIBRARY;
    expect(libraryExecArgv()).toEqual(['--conditions=@flight/source']);
    process.env.FLIGHT_BENCH_LIBRARY = 'source';
    expect(libraryBuild()).toBe('source');
  });
});
