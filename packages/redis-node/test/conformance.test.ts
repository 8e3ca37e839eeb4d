import { randomUUID } from 'node:crypto';
import { registerCoordinatorConformance } from '@flight/core/testing';
import { deleteKeys, scanKeysWithoutTtl, sharedRedisUrl } from '@flight/redis-test-kit';
import { createClient as createClient5 } from 'redis';
import { createClient as createClient6 } from 'redis6';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodeRedisCoordinator } from '../src/index.js';

const url = sharedRedisUrl();
const prefix = `flight-test-node-${randomUUID().slice(0, 8)}`;

const clients = {
  'redis 5': () => createClient5({ url }),
  'redis 6': () => createClient6({ url }),
};

for (const major of ['redis 5', 'redis 6'] as const) {
  describe(`${major} standalone`, () => {
    const client = clients[major]();
    const keyPrefix = `${prefix}-${major.replace(' ', '')}`;
    beforeAll(async () => {
      await client.connect();
    });
    afterAll(async () => {
      await client.close();
    });

    registerCoordinatorConformance({
      name: `${major} standalone`,
      create: (now) => {
        const coordinator = createNodeRedisCoordinator({ client, prefix: keyPrefix, clock: now });
        return { coordinator, cleanup: () => coordinator.close() };
      },
      modelRuns: 100,
      storesTraceparent: true,
    });

    it('leaves no key without a TTL', async () => {
      expect(await scanKeysWithoutTtl(url, `${keyPrefix}:*`)).toEqual([]);
    });
  });
}

afterAll(async () => {
  await deleteKeys(url, `${prefix}-*`);
});
