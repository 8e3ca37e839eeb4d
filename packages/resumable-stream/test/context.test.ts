/**
 * The drop-in's API, as `resumable-stream` documents it, on two "servers" (two contexts, each with its own
 * Redis coordinator) over a real Redis, through each entry point's client.
 */
import { randomUUID } from 'node:crypto';
import { deleteKeys, scanKeysWithoutTtl, sharedRedisUrl } from '@flight/test-servers';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { afterAll, describe, expect, it } from 'vitest';
import { createResumableStreamContext as onNodeRedis } from '../src/index.js';
import { createResumableStreamContext as onIoredis } from '../src/ioredis.js';
import type { ResumableStreamContext } from '../src/types.js';

/** A stream of `parts`, the next one each time `step()` is called (the last one closes it). */
function steppedStream(parts: string[]) {
  let index = 0;
  let pull: (() => void) | undefined;
  let made = 0;
  const stream = () => {
    made++;
    return new ReadableStream<string>({
      async pull(sink) {
        await new Promise<void>((resolve) => (pull = resolve));
        sink.enqueue(parts[index++]!);
        if (index === parts.length) sink.close();
      },
    });
  };
  return {
    stream,
    made: () => made,
    /** Lets the next part through, once the stream waits for it. */
    async step() {
      while (!pull) await new Promise((resolve) => setImmediate(resolve));
      const go = pull;
      pull = undefined;
      go();
    },
  };
}

async function readAll(stream: ReadableStream<string> | null | undefined): Promise<string> {
  if (!stream) throw new Error(`no stream: ${String(stream)}`);
  let text = '';
  for await (const chunk of stream as unknown as AsyncIterable<string>) text += chunk;
  return text;
}

/** Reads `stream` until it has at least `length` characters; returns them and the reader (to read on). */
async function readUntil(stream: ReadableStream<string>, length: number) {
  const reader = stream.getReader();
  let text = '';
  while (text.length < length) {
    const next = await reader.read();
    if (next.done) break;
    text += next.value;
  }
  return { text, reader };
}

const PARTS = ['data: one\n\n', 'data: two\n\n', 'data: three\n\n', 'data: four\n\n'];
const WHOLE = PARTS.join('');

const url = sharedRedisUrl();
const keyPrefix = `flight-rs-${randomUUID().slice(0, 8)}`;
const clients: { quit(): Promise<unknown> }[] = [];
const contexts: ResumableStreamContext[] = [];
/** The promises each context handed to its `waitUntil`. */
const kept: Promise<unknown>[] = [];
const waitUntil = (promise: Promise<unknown>) => void kept.push(promise);

const servers: Record<string, () => Promise<[ResumableStreamContext, ResumableStreamContext]>> = {
  'node-redis (resumable-stream, resumable-stream/redis)': async () => {
    const make = () => {
      const publisher = createClient({ url });
      clients.push(publisher);
      // Not connected: the context connects it, as resumable-stream does.
      const context = onNodeRedis({ waitUntil, keyPrefix, publisher });
      contexts.push(context);
      return context;
    };
    return [make(), make()];
  },
  'ioredis (resumable-stream/ioredis)': async () => {
    const make = () => {
      const publisher = new Redis(url);
      clients.push(publisher);
      const context = onIoredis({ waitUntil, keyPrefix, publisher });
      contexts.push(context);
      return context;
    };
    return [make(), make()];
  },
};

afterAll(async () => {
  await Promise.all(contexts.map((context) => context.close()));
  // A client passed as publisher stays open: it is the application's.
  const open = (client: { isOpen?: boolean; status?: string }) => client.isOpen ?? !['end', 'close'].includes(client.status!);
  expect(clients.every((client) => open(client as { isOpen?: boolean; status?: string }))).toBe(true);
  expect(await scanKeysWithoutTtl(url, `${keyPrefix}*`)).toEqual([]);
  await deleteKeys(url, `${keyPrefix}*`);
  await Promise.all(clients.map((c) => c.quit().catch(() => undefined)));
});

for (const [name, start] of Object.entries(servers))
  describe(name, () => {
    it('resumableStream: the first call makes the stream, a call on another server follows it from its start; done → null', async () => {
      const [a, b] = await start();
      const id = randomUUID();
      const source = steppedStream(PARTS);
      expect(await a.hasExistingStream(id)).toBeNull();
      const waiting = kept.length;
      const first = await a.resumableStream(id, source.stream);
      const firstText = readAll(first);
      // The producer's run is handed to waitUntil, so a serverless function lives until the stream is made.
      expect(kept.length).toBe(waiting + 1);
      let runEnded = false;
      void kept.at(-1)!.then(() => (runEnded = true));
      await source.step();
      await source.step();
      // Two parts out: another server's call follows the same stream (its makeStream is never called).
      const second = await b.resumableStream(id, () => {
        throw new Error('a follower never makes the stream');
      });
      const secondText = readAll(second);
      expect(await b.hasExistingStream(id)).toBe(true);
      await source.step();
      await source.step();
      expect(await firstText).toBe(WHOLE);
      expect(await secondText).toBe(WHOLE);
      expect(source.made()).toBe(1);
      await kept.at(-1);
      expect(runEnded).toBe(true);
      expect(await a.hasExistingStream(id)).toBe('DONE');
      expect(await b.resumableStream(id, source.stream)).toBeNull();
    });

    it('skipCharacters: a reader resuming after N characters gets exactly the rest, across chunk boundaries', async () => {
      const [a, b] = await start();
      const id = randomUUID();
      const source = steppedStream(PARTS);
      const first = await a.createNewResumableStream(id, source.stream);
      await source.step();
      const { text } = await readUntil(first!, PARTS[0]!.length);
      expect(text).toBe(PARTS[0]);
      // Readers that went away after 5, a whole part's and a part and 3 characters resume on the other server.
      const skips = [5, PARTS[0]!.length, PARTS[0]!.length + 3];
      const rests = await Promise.all(skips.map((skip) => b.resumeExistingStream(id, skip)));
      const texts = rests.map(readAll);
      for (let i = 1; i < PARTS.length; i++) await source.step();
      expect(await Promise.all(texts)).toEqual(skips.map((skip) => WHOLE.slice(skip)));
    });

    it('once resumableStream resolves, the stream exists for every server, before anybody reads it', async () => {
      const [a, b] = await start();
      const id = randomUUID();
      const source = steppedStream(['x\n']);
      const made = await a.resumableStream(id, source.stream);
      expect(await b.hasExistingStream(id)).toBe(true);
      const resumed = await b.resumeExistingStream(id);
      expect(resumed).toBeTruthy();
      const texts = Promise.all([readAll(made), readAll(resumed)]);
      await source.step();
      expect(await texts).toEqual(['x\n', 'x\n']);
    });

    it('resumeExistingStream: undefined for an unknown id, null for a done stream; it never makes a stream', async () => {
      const [a, b] = await start();
      expect(await b.resumeExistingStream(randomUUID())).toBeUndefined();
      const id = randomUUID();
      const source = steppedStream(['only\n']);
      const made = await a.createNewResumableStream(id, source.stream);
      const text = readAll(made);
      await source.step();
      expect(await text).toBe('only\n');
      expect(await b.resumeExistingStream(id)).toBeNull();
      expect(await b.hasExistingStream(id)).toBe('DONE');
    });

    it('the producer finishes when its reader goes away, and a reader on another server still gets the whole stream', async () => {
      const [a, b] = await start();
      const id = randomUUID();
      const source = steppedStream(PARTS);
      const first = await a.resumableStream(id, source.stream);
      await source.step();
      const { reader } = await readUntil(first!, 1);
      await reader.cancel();
      const follower = await b.resumeExistingStream(id);
      const text = readAll(follower);
      for (let i = 1; i < PARTS.length; i++) await source.step();
      expect(await text).toBe(WHOLE);
      expect(await a.hasExistingStream(id)).toBe('DONE');
    });

    it('refuses a bad skipCharacters or stream id with a typed error', async () => {
      const [a] = await start();
      await expect(a.resumeExistingStream(randomUUID(), -1)).rejects.toMatchObject({ code: 'E_FLIGHT_CONFIGURATION' });
      await expect(a.hasExistingStream('')).rejects.toMatchObject({ code: 'E_FLIGHT_CONFIGURATION' });
    });
  });
