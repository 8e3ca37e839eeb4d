/**
 * The options both adapters' factories take (`createIoredisCoordinator`, `createNodeRedisSessionLock`…),
 * checked when the coordinator or lock is created: a missing or wrong client, a URL where a client belongs,
 * a client of the other library, a node-redis client never connected, or an unknown option is a
 * `FlightConfigurationError` that names the option and the fix — never a silent default connection, an
 * error at first use, or (in hybrid mode) a silent in-process fallback.
 */
import { assertKnownOptions, FlightConfigurationError } from '@flight/core';

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
  /**
   * Why `client` cannot be used (a string to show), or undefined when it can: not this library's client,
   * the other library's, not connected.
   */
  problemOf(client: object): string | undefined;
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
  const problem = library.problemOf(client);
  if (problem) throw new FlightConfigurationError(`${factory}: ${problem}`, { context: { option: 'client' } });
}
