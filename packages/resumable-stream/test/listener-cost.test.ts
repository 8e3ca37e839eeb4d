/**
 * The cost of a stream does not grow with its listeners: on a Redis server of the test's own, the commands
 * Redis processes for a 40-part stream with 1, 10 and 100 listeners on another server (resumeExistingStream
 * each) — `resumable-stream` publishes every part once per listener; here a server follows a stream once,
 * however many of its readers listen.
 */
import { randomUUID } from 'node:crypto';
import { createSingleFlight } from '@flight/core';
import { createIoredisCoordinator } from '@flight/redis-ioredis';
import { startRedisServer, type RedisServer } from '@flight/test-servers';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createResumableStreamContext } from '../src/generic.js';

let redis: RedisServer;
let admin: Redis;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  redis = await startRedisServer();
  admin = new Redis(redis.url);
});
afterAll(async () => {
  await Promise.all(closers.map((close) => close()));
  admin.disconnect();
  await redis.stop();
});

function server(nodeId: string) {
  const coordinator = createIoredisCoordinator({ redis: redis.url, prefix: 'rs-cost' });
  const flights = createSingleFlight({ coordinator, nodeId, defaults: { l1: { enabled: false } } });
  closers.push(() => flights.close());
  return { flights, context: createResumableStreamContext({ waitUntil: null, coordinator, flights }) };
}

const processed = async () => Number(/total_commands_processed:(\d+)/.exec(await admin.info('stats'))![1]);

/** The commands Redis processed for a stream of `parts` parts with `count` listeners on the other server. */
async function commandsFor(producer: ReturnType<typeof server>, listeners: ReturnType<typeof server>, count: number, parts: number) {
  const id = randomUUID();
  let release!: () => void;
  const followed = new Promise<void>((resolve) => (release = resolve));
  const unlisten = listeners.flights.on('follower', () => release());
  let index = 0;
  const before = await processed();
  const made = await producer.context.resumableStream(
    id,
    () =>
      new ReadableStream<string>({
        async pull(sink) {
          if (index === 1) await followed;
          sink.enqueue(`data: part ${index++}\n\n`);
          if (index === parts) sink.close();
        },
      }),
  );
  const read = async (stream: ReadableStream<string> | null | undefined) => {
    let text = '';
    for await (const chunk of stream as unknown as AsyncIterable<string>) text += chunk;
    return text;
  };
  const own = read(made);
  const texts = await Promise.all(Array.from({ length: count }, async () => read(await listeners.context.resumeExistingStream(id))));
  expect(new Set([await own, ...texts]).size).toBe(1);
  expect((await own).split('\n\n')).toHaveLength(parts + 1);
  unlisten();
  return (await processed()) - before - 1;
}

it('Redis commands per part: flat from 1 to 10 to 100 listeners on another server (each listener costs a few commands once)', async () => {
  const producer = server('producer');
  const listeners = server('listeners');
  const perPart: Record<number, number> = {};
  const total: Record<number, number> = {};
  for (const count of [1, 10, 100]) {
    // The slope between a 40-part and an 80-part stream: what each part costs, whatever each listener costs once.
    const short = await commandsFor(producer, listeners, count, 40);
    const long = await commandsFor(producer, listeners, count, 80);
    perPart[count] = (long - short) / 40;
    total[count] = short;
  }
  const perListener = (total[100]! - total[1]!) / 99;
  console.log(`[resumable-stream] ${JSON.stringify({ redisCommandsPerPart: perPart, commandsPerListenerOnce: perListener })}`);
  expect(perPart[10]!).toBeLessThanOrEqual(perPart[1]! + 0.5);
  expect(perPart[100]!).toBeLessThanOrEqual(perPart[1]! + 0.5);
});
