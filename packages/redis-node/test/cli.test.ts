import { fileURLToPath } from 'node:url';
import { it } from 'vitest';
import { checkCli, sharedRedisUrl } from '@flight/redis-test-kit';
import { adapter } from './adapter-under-test.js';

const cli = fileURLToPath(new URL('../src/cli.ts', import.meta.url));

it('node-redis: the flight command lists, shows, forgets and watches flights on a standalone server, with meaningful exit codes', async () => {
  await checkCli(cli, { redis: sharedRedisUrl(), cluster: false }, (prefix) => adapter.coordinator(sharedRedisUrl(), { prefix }), true);
}, 300_000);
