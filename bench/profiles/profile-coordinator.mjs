/**
 * A Redis coordinator for the profile loops on either client: `adapter` 'node-redis' (@redis/client) or
 * anything else (ioredis), from `mod` (a module or bundle exporting both factories), on its own connection.
 * `close()` closes the coordinator and then the connection.
 */
import { Redis } from 'ioredis';
import { createClient } from 'redis';

export async function profileCoordinator(mod, adapter, url, prefix) {
  if (adapter === 'node-redis') {
    const client = createClient({ url });
    await client.connect();
    const coordinator = mod.createNodeRedisCoordinator({ client, prefix });
    return { coordinator, close: async () => (await coordinator.close(), await client.close()) };
  }
  const client = new Redis(url);
  const coordinator = mod.createIoredisCoordinator({ client, prefix });
  return { coordinator, close: async () => (await coordinator.close(), client.disconnect()) };
}
