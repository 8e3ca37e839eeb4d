import { it } from 'vitest';
import { checkInspector, sharedRedisUrl } from '@flight/redis-test-kit';
import { adapter } from './adapter-under-test.js';

it(`${adapter.name}: inspect one flight and list a stage's flights on a standalone server, never showing a token`, async () => {
  await checkInspector((prefix) => adapter.coordinator(sharedRedisUrl(), { prefix }));
});
