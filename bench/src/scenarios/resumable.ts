/**
 * Scenario 16 — a drop-in for `resumable-stream`: what a stream costs Redis as its listeners grow, for
 * `resumable-stream` 2.2 itself and for `@flight/resumable-stream`, on the run's Redis, in the same run.
 *
 * Two "servers" in the harness process (two contexts, each with its own clients): one makes a stream of N
 * parts (`resumableStream`), the other has 1, 10 or 100 listeners on it (`resumeExistingStream` each). The
 * producer holds its second part until every listener has read the first, then makes the rest at once.
 * Commands per part: the slope of Redis's `total_commands_processed` between a 40-part and an 80-part
 * stream (what each part costs, apart from what each listener costs once); commands per listener: the
 * 40-part stream's commands with 100 listeners minus with 1, over 99.
 */
import { randomUUID } from 'node:crypto';
import { createResumableStreamContext as flightContext } from '@flight/resumable-stream';
import { createClient } from 'redis';
import { createResumableStreamContext as upstreamContext } from 'resumable-stream';
import type { BenchContext, ResultRow } from '../context.js';
import { prefixOf } from '../context.js';
import { round } from '../stats.js';

export interface ResumableOptions {
  listeners: readonly number[];
}

export function resumableOptions(quick: boolean): ResumableOptions {
  return { listeners: quick ? [1, 10] : [1, 10, 100] };
}

type Implementation = 'resumable-stream' | 'flight';
type Context = Pick<ReturnType<typeof flightContext>, 'resumableStream' | 'resumeExistingStream'>;

async function server(implementation: Implementation, ctx: BenchContext) {
  const keyPrefix = prefixOf(ctx, 'resumable', implementation);
  const publisher = createClient({ url: ctx.redis.url });
  if (implementation === 'flight') {
    const context = flightContext({ waitUntil: null, keyPrefix, publisher });
    return { context: context as Context, close: async () => (await context.close(), await publisher.quit()) };
  }
  const subscriber = createClient({ url: ctx.redis.url });
  await Promise.all([publisher.connect(), subscriber.connect()]);
  const context = upstreamContext({ waitUntil: null, keyPrefix, publisher, subscriber });
  return { context: context as Context, close: async () => void (await Promise.all([publisher.quit(), subscriber.quit()])) };
}

const processed = async (ctx: BenchContext) => Number(/total_commands_processed:(\d+)/.exec(await ctx.admin.info('stats'))![1]);

/** The commands Redis processed for one stream of `parts` parts with `listeners` listeners on the other server. */
async function commandsOf(ctx: BenchContext, producer: Context, other: Context, listeners: number, parts: number): Promise<number> {
  const id = randomUUID();
  let release!: () => void;
  const everyoneIn = new Promise<void>((resolve) => (release = resolve));
  let index = 0;
  const before = await processed(ctx);
  const made = await producer.resumableStream(
    id,
    () =>
      new ReadableStream<string>({
        async pull(sink) {
          if (index === 1) await everyoneIn;
          sink.enqueue(`data: part ${index++}\n\n`);
          if (index === parts) sink.close();
        },
      }),
  );
  const drain = async (stream: ReadableStream<string> | null | undefined, onFirst?: () => void) => {
    if (!stream) throw new Error('no stream to read');
    let text = '';
    for await (const chunk of stream as unknown as AsyncIterable<string>) {
      if (text === '') onFirst?.();
      text += chunk;
    }
    return text;
  };
  const own = drain(made);
  let first = 0;
  const streams = await Promise.all(Array.from({ length: listeners }, () => other.resumeExistingStream(id)));
  const texts = streams.map((stream) => drain(stream, () => ++first === listeners && release()));
  const all = await Promise.all([own, ...texts]);
  if (new Set(all).size !== 1 || all[0]!.split('\n\n').length !== parts + 1) throw new Error('a listener read another text');
  return (await processed(ctx)) - before - 1;
}

const NAMES: Record<Implementation, string> = { 'resumable-stream': 'resumable-stream 2.2', flight: '@flight/resumable-stream' };

export async function runResumable(ctx: BenchContext, opts: ResumableOptions): Promise<ResultRow[]> {
  const rows: ResultRow[] = [];
  for (const implementation of ['resumable-stream', 'flight'] as const) {
    const [producer, other] = [await server(implementation, ctx), await server(implementation, ctx)];
    try {
      const perPart: Record<number, number | null> = {};
      const short: Record<number, number> = {};
      for (const listeners of opts.listeners) {
        short[listeners] = await commandsOf(ctx, producer.context, other.context, listeners, 40);
        const long = await commandsOf(ctx, producer.context, other.context, listeners, 80);
        perPart[listeners] = round((long - short[listeners]!) / 40);
      }
      const most = Math.max(...opts.listeners);
      const fewest = Math.min(...opts.listeners);
      const perListener = round((short[most]! - short[fewest]!) / (most - fewest));
      for (const listeners of opts.listeners)
        rows.push({
          scenario: 'resumable-stream',
          contender: NAMES[implementation],
          upstreamCalls: null,
          p50Ms: null,
          p99Ms: null,
          maxMs: null,
          listeners,
          commandsPerPart: perPart[listeners]!,
          commandsPerListener: perListener,
          commandsPer40PartStream: short[listeners]!,
        });
      ctx.log(
        `resumable-stream ${NAMES[implementation]}: commands per part by listeners ${JSON.stringify(perPart)}, per listener ${perListener}`,
      );
    } finally {
      await producer.close();
      await other.close();
    }
  }
  return rows;
}
