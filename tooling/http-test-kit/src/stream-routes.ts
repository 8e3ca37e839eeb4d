/**
 * The routes of the streamed-response suite (stream-suite.ts), served by every framework binding in its
 * own server processes (stream-node.ts). No test framework is imported here: server processes load it.
 * Every route counts its handler runs in Redis and writes its events as they are produced:
 *
 * - `/r/live/<kind>/<id>` (`kind` `sse`: `text/event-stream`; `chunked`: `text/plain`, no length): event 1,
 *   then waits until every client of the test saw a first piece (`seen`, counted by the clients), events 2
 *   and 3, then waits for a late joiner's first piece (`late`), events 4 and 5. A wait that runs out (5 s) is
 *   recorded (`stalled`): the clients' first pieces did not arrive while the handler ran.
 * - `/r/paced/<kind>/<id>`: five events 60 ms apart (`x-gap` ms when the request says); `kind` `private` adds `Cache-Control: private`,
 *   `nocache` `Cache-Control: no-cache` (what SSE handlers usually send), `fresh` `Cache-Control:
 *   max-age=60`, `cookie` a `Set-Cookie`, `plain` nothing; `broken` fails after two events.
 */
import type { Cluster, Redis } from 'ioredis';
import type { NeutralRequest, Reply } from './middleware-suite.js';

/** The events every live or paced route writes, in order. */
export const STREAM_EVENTS = [1, 2, 3, 4, 5].map((n) => `data: event ${n}\n\n`);

/** The Redis keys of one test run (`id`). */
export const streamKeys = (prefix: string, id: string) => ({
  calls: `${prefix}:calls:${id}`,
  seen: `${prefix}:seen:${id}`,
  late: `${prefix}:late:${id}`,
  stalled: `${prefix}:stalled:${id}`,
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A route's handler, for the neutral driver setup. */
export function streamRoutes(redis: Redis | Cluster, prefix: string) {
  const ttl = async (key: string) => void (await redis.pexpire(key, 60_000));
  async function until(key: string, count: number, stalled: string): Promise<void> {
    const deadline = Date.now() + 5000;
    while (Number(await redis.get(key)) < count) {
      if (Date.now() > deadline) {
        await redis.set(stalled, key, 'PX', 60_000);
        return;
      }
      await sleep(5);
    }
  }
  return async (req: NeutralRequest): Promise<Reply> => {
    const [, route, kind, id] = req.path.replace(/^\/r/, '').split('/') as [string, string, string, string];
    const keys = streamKeys(prefix, id);
    await redis.incr(keys.calls);
    await ttl(keys.calls);
    const headers: Record<string, string> = { 'content-type': kind === 'chunked' ? 'text/plain; charset=utf-8' : 'text/event-stream' };
    if (kind === 'private') headers['cache-control'] = 'private';
    if (kind === 'nocache') headers['cache-control'] = 'no-cache';
    if (kind === 'fresh') headers['cache-control'] = 'max-age=60';
    if (kind === 'cookie') headers['set-cookie'] = `sid=${id}`;
    const expected = Number(req.headers['x-expect'] ?? 1);
    const gapMs = Number(req.headers['x-gap'] ?? 60);
    async function* live() {
      yield STREAM_EVENTS[0]!;
      await until(keys.seen, expected, keys.stalled);
      yield STREAM_EVENTS[1]!;
      yield STREAM_EVENTS[2]!;
      await until(keys.late, 1, keys.stalled);
      yield STREAM_EVENTS[3]!;
      yield STREAM_EVENTS[4]!;
    }
    async function* paced() {
      for (const [i, event] of STREAM_EVENTS.entries()) {
        if (kind === 'broken' && i === 2) throw new Error('upstream failed mid-stream');
        yield event;
        await sleep(gapMs);
      }
    }
    return { kind: 'live', headers, live: route === 'live' ? live : paced };
  };
}
