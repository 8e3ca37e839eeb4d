import { randomUUID } from 'node:crypto';
import { registerCoordinatorConformance } from '@flight/core/testing';
import { deleteKeys, scanKeysWithoutTtl, sharedRedisUrl } from '@flight/redis-test-kit';
import { Redis as Redis5 } from 'ioredis';
import { Redis as Redis6 } from 'ioredis6';
import { afterAll, describe, expect, it } from 'vitest';
import { createIoredisCoordinator } from '../src/index.js';

const url = sharedRedisUrl();
const prefix = `flight-test-ioredis-${randomUUID().slice(0, 8)}`;

const clients = {
  'ioredis 5': () => new Redis5(url),
  'ioredis 6': () => new Redis6(url),
};

for (const major of ['ioredis 5', 'ioredis 6'] as const) {
  describe(`${major} standalone`, () => {
    const client = clients[major]();
    const keyPrefix = `${prefix}-${major.replace(' ', '')}`;
    afterAll(async () => {
      await client.quit();
    });

    registerCoordinatorConformance({
      name: `${major} standalone`,
      create: (now) => {
        const coordinator = createIoredisCoordinator({ client, prefix: keyPrefix, clock: now });
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
