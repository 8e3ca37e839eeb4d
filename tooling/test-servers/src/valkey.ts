/**
 * A valkey-server >= 8.1 for the tests that need what Redis 7 lacks (`SET key value IFEQ match`):
 * FLIGHT_VALKEY_SERVER (set by `npm test`, see tooling/scripts/valkey.mjs), else the build that script
 * caches in the repository's node_modules/.cache/flight-valkey/.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRedisServer, type RedisServer, type StartRedisServerOptions } from './servers';

/** The valkey version tooling/scripts/valkey.mjs builds and caches. */
const CACHED_VERSION = '8.1.1';

/** The monorepo's root: the nearest directory above this file holding pnpm-workspace.yaml. */
function repoRoot(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'pnpm-workspace.yaml'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** The path of a valkey-server >= 8.1: FLIGHT_VALKEY_SERVER when it names a file, else the cached build; throws when neither exists. */
export function valkeyServerBinary(): string {
  const fromEnv = process.env.FLIGHT_VALKEY_SERVER;
  if (fromEnv && existsSync(fromEnv)) return fromEnv;
  const root = repoRoot();
  const cached = root && join(root, 'node_modules', '.cache', 'flight-valkey', CACHED_VERSION, 'valkey-server');
  if (cached && existsSync(cached)) return cached;
  throw new Error(
    'no valkey-server >= 8.1 found: run `node tooling/scripts/valkey.mjs` (or `npm test`, which builds it) or set FLIGHT_VALKEY_SERVER',
  );
}

/** Starts a standalone valkey-server of the test's own on a free port, like `startRedisServer`. */
export async function startValkeyServer(options: Omit<StartRedisServerOptions, 'binary'> = {}): Promise<RedisServer> {
  return startRedisServer({ ...options, binary: valkeyServerBinary() });
}
