/**
 * Options objects are checked against the names they document: a typo (`resultTTLMs`, `stage` for
 * `stages`) is a `FlightConfigurationError` naming the closest known option, never silently ignored.
 */
import { FlightConfigurationError } from '../errors.js';

/**
 * `true` when `List` names every option of `Options`, else the names it misses: a constant of this type
 * assigned `true` keeps an option list complete at compile time (an option added to the type but not to the
 * list fails to compile, naming it).
 */
export type ListsEveryOption<Options, List extends readonly unknown[]> = [Exclude<keyof Options, List[number]>] extends [never]
  ? true
  : Exclude<keyof Options, List[number]>;

/** Edit distance between two short names (insertions, deletions, substitutions). */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** The known name `name` was most likely meant to be, if any is close. */
export function closestOption(name: string, known: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = candidate.toLowerCase() === lower ? 0 : distance(lower, candidate.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return bestDistance <= Math.max(2, Math.floor(name.length / 4)) ? best : undefined;
}

/**
 * Throws `FlightConfigurationError` when `input` is not a plain options object, or has a property that is
 * not one of `known` (own enumerable properties whose value is not `undefined`). `where` names the options
 * in the message (`createSingleFlight`, `stage "score"`).
 */
export function assertKnownOptions(where: string, input: unknown, known: readonly string[]): void {
  if (input === undefined) return;
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new FlightConfigurationError(
      `${where}: options must be an object, got ${input === null ? 'null' : Array.isArray(input) ? 'an array' : typeof input}`,
      {
        context: { option: where },
      },
    );
  }
  for (const name of Object.keys(input)) {
    if (known.includes(name) || (input as Record<string, unknown>)[name] === undefined) continue;
    const meant = closestOption(name, known);
    throw new FlightConfigurationError(
      `${where}: unknown option "${name}"${meant ? ` (did you mean "${meant}"?)` : ''}; known options: ${known.join(', ')}`,
      { context: { option: name, ...(meant ? { fix: meant } : {}) } },
    );
  }
}

/**
 * A check of per-call options against `known`, made for the hot path: a plain loop over the options' names
 * against a set, and `assertKnownOptions`' message (the option meant, the known ones) only when one is off.
 * Plain objects are checked, where typos happen; an instance of a class that implements the options (an
 * HTTP binding's call object) is typed by its class, and its other fields are its own business.
 */
export function knownOptionsCheck(where: string, known: readonly string[]): (input: unknown) => void {
  const names = new Set(known);
  return (input) => {
    if (input === undefined) return;
    if (input === null || typeof input !== 'object' || Array.isArray(input)) return assertKnownOptions(where, input, known);
    const prototype: unknown = Object.getPrototypeOf(input);
    if (prototype !== Object.prototype && prototype !== null) return;
    for (const name in input) {
      if (!names.has(name) && (input as Record<string, unknown>)[name] !== undefined) return assertKnownOptions(where, input, known);
    }
  };
}
