/**
 * Which @flight packages the bench measures: the built ones by default (`dist/`, what users install:
 * no tsx keep-names helpers on every closure, the bundler's output), or the TypeScript sources with
 * `FLIGHT_BENCH_LIBRARY=source`. `bench.mjs` builds the packages first and sets the variable for the
 * whole run; the bench's tests, which vitest runs on the sources, leave it unset and stay on the sources.
 * Every process the bench forks (pool workers, HTTP servers) takes the same packages as the run.
 */
export type LibraryBuild = 'built' | 'source';

export function libraryBuild(): LibraryBuild {
  return process.env.FLIGHT_BENCH_LIBRARY === 'built' ? 'built' : 'source';
}

/** Node options of a forked bench process (before `--import tsx`): the package condition of the run. */
export function libraryExecArgv(): string[] {
  return libraryBuild() === 'source' ? ['--conditions=@flight/source'] : [];
}
