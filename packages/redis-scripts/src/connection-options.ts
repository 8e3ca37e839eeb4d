/**
 * The options both adapters' factories take (`createIoredisCoordinator`, `createNodeRedisSessionLock`…),
 * checked when the coordinator or lock is created: a missing or wrong client, a URL where a client belongs,
 * a client of the other library, a node-redis client never connected, or an unknown option is a
 * `FlightConfigurationError` that names the option and the fix — never a silent default connection, an
 * error at first use, or (in hybrid mode) a silent in-process fallback.
 */
import { FlightConfigurationError } from '@flight/core';
import { assertKnownOptions } from '@flight/core/adapter';

/** The names `RedisCoordinatorOptions` documents. */
export const COORDINATOR_OPTION_NAMES = [
  'prefix',
  'commandTimeoutMs',
  'clock',
  'localClock',
  'maxPayloadBytes',
  'waitReplicas',
  'inlineResultBytes',
] as const;

/** The names `RedisSessionLockOptions` documents. */
export const SESSION_LOCK_OPTION_NAMES = ['prefix', 'commandTimeoutMs', 'retryIntervalMs'] as const;

/** What an adapter knows about its client library, to check a `client` and to say what to pass instead. */
export interface ClientLibrary {
  /** The package the adapter binds (`ioredis`, `redis`). */
  name: string;
  /** What to pass as `client`, for the messages (`your ioredis Redis or Cluster`). */
  clientHint: string;
  /** The methods this library's client has and the adapter calls. */
  methods: readonly string[];
  /**
   * Why a client that has them all still cannot be used (not connected), or why one that lacks some is the
   * other library's (and which adapter to use); undefined otherwise.
   */
  problemOf(client: Record<string, unknown>, missing: readonly string[]): string | undefined;
}

/**
 * Checks the options of `factory`: an object with exactly one of `client` (checked by `library`) and
 * `redis`, and no option but `client`, `redis` and `optionNames`.
 */
export function assertConnectionOptions(factory: string, options: unknown, library: ClientLibrary, optionNames: readonly string[]): void {
  const usage = `pass { client } (${library.clientHint}) or { redis } (${library.name} connection options)`;
  if (options === null || typeof options !== 'object') {
    throw new FlightConfigurationError(`${factory} needs options: ${usage}`, { context: { option: 'client' } });
  }
  assertKnownOptions(factory, options, ['client', 'redis', ...optionNames]);
  const { client, redis } = options as { client?: unknown; redis?: unknown };
  if (client !== undefined && redis !== undefined) {
    throw new FlightConfigurationError(`${factory}: pass client or redis, not both`, { context: { option: 'client' } });
  }
  if (client === undefined) {
    if (redis === undefined || redis === null) {
      throw new FlightConfigurationError(`${factory}: no connection given (it would silently connect to 127.0.0.1:6379); ${usage}`, {
        context: { option: 'client' },
      });
    }
    return;
  }
  if (typeof client !== 'object' || client === null) {
    const hint =
      typeof client === 'string' ? `; a URL goes in redis: { redis: ${library.name === 'redis' ? "{ url: '…' }" : "'redis://…'"} }` : '';
    throw new FlightConfigurationError(
      `${factory}: client must be ${library.clientHint}, got ${client === null ? 'null' : typeof client}${hint}`,
      {
        context: { option: 'client' },
      },
    );
  }
  const methods = client as Record<string, unknown>;
  const missing = library.methods.filter((name) => typeof methods[name] !== 'function');
  const problem =
    library.problemOf(methods, missing) ??
    (missing.length > 0 ? `client is not ${library.clientHint} (it has no ${missing.join(', ')})` : undefined);
  if (problem) throw new FlightConfigurationError(`${factory}: ${problem}`, { context: { option: 'client' } });
}
