/**
 * A lost completion notice never leaves a reader waiting: the reading server's subscriber drops every
 * terminal notice (a lossy driver), and its readers still end, with the whole stream, by polling the record.
 */
import { randomUUID } from 'node:crypto';
import { createSingleFlight } from '@flight/core';
import { createIoredisDriver } from '@flight/redis-ioredis';
import { createRedisCoordinator } from '@flight/redis-scripts';
import { deleteKeys, sharedRedisUrl, withoutTerminalNotices } from '@flight/redis-test-kit';
import { afterAll, expect, it } from 'vitest';
import { createResumableStreamContext } from '../src/generic.js';

const url = sharedRedisUrl();
const prefix = `flight-rs-lost-${randomUUID().slice(0, 8)}`;
const closers: (() => Promise<void>)[] = [];

afterAll(async () => {
  await Promise.all(closers.map((close) => close()));
  await deleteKeys(url, `${prefix}*`);
});

function server(driver = createIoredisDriver({ redis: url })) {
  const coordinator = createRedisCoordinator(driver, { prefix });
  // A wait that outlasts the test: only polling the record can end the reader.
  const flights = createSingleFlight({ coordinator, defaults: { pollIntervalMs: 200, waitTimeoutMs: 600_000, l1: { enabled: false } } });
  closers.push(() => flights.close());
  return { flights, context: createResumableStreamContext({ waitUntil: null, coordinator, flights }) };
}

it("a reader whose server never hears the stream's end still ends with the whole stream", async () => {
  const lossy = withoutTerminalNotices(createIoredisDriver({ redis: url }));
  const producer = server();
  const reader = server(lossy.driver);
  const id = randomUUID();
  const parts = Array.from({ length: 8 }, (_, i) => `part ${i}\n`);
  let release!: () => void;
  const readerIn = new Promise<void>((resolve) => (release = resolve));
  let index = 0;
  const made = await producer.context.resumableStream(
    id,
    () =>
      new ReadableStream<string>({
        async pull(sink) {
          if (index === 1) await readerIn;
          sink.enqueue(parts[index++]!);
          if (index === parts.length) sink.close();
        },
      }),
  );
  const produced = (async () => {
    let text = '';
    for await (const chunk of made as unknown as AsyncIterable<string>) text += chunk;
    return text;
  })();
  // The run goes on past its first part once the reading server follows it.
  reader.flights.on('follower', () => release());
  const resumed = await reader.context.resumeExistingStream(id);
  let text = '';
  for await (const chunk of resumed as unknown as AsyncIterable<string>) text += chunk;
  expect(await produced).toBe(parts.join(''));
  expect(text).toBe(parts.join(''));
  expect(lossy.lost()).toBeGreaterThan(0);
});
