/**
 * The streamed-response part of the middleware suite (routes with `stream: true`): real servers of the
 * driver in their own processes (stream-node.ts) behind the shared Redis, real HTTP clients that count
 * their first piece in Redis (the routes of stream-routes.ts wait for it, so "live" is checked, not timed).
 */
import { randomBytes } from 'node:crypto';
import { get as httpGet, type ClientRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { ServerProcess } from './cluster-harness.js';
import type { Driver } from './middleware-suite.js';
import { streamServers } from './stream-servers.js';
import { STREAM_EVENTS, streamKeys } from './stream-routes.js';

export interface Streamed {
  status: number;
  role: string | null;
  cookie: string | null;
  age: string | null;
  contentType: string | null;
  contentLength: string | null;
  body: string;
  /** When the first body piece arrived, and when the response ended (ms, `performance.now()`). */
  firstAt: number;
  endAt: number;
  /** The response was cut short (the client gave up, or the server closed the connection). */
  aborted: boolean;
}

export interface OpenStream {
  done: Promise<Streamed>;
  /** The body received so far. */
  readonly body: string;
  /** Goes away (closes the connection). */
  leave(): void;
}

const WHOLE = STREAM_EVENTS.join('');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A GET whose body is read piece by piece; `onFirst` runs when the first body piece arrives. */
export function open(server: ServerProcess, path: string, headers: Record<string, string>, onFirst?: () => unknown): OpenStream {
  let body = '';
  let request: ClientRequest;
  const done = new Promise<Streamed>((resolve, reject) => {
    request = httpGet(`${server.url}${path}`, { headers: { host: 'app.example', ...headers } }, (res) => {
      let firstAt = 0;
      let aborted = false;
      res.setEncoding('utf8');
      res.on('data', (piece: string) => {
        if (!firstAt) {
          firstAt = performance.now();
          void onFirst?.();
        }
        body += piece;
      });
      res.on('aborted', () => (aborted = true));
      res.on('error', () => (aborted = true));
      res.on('close', () => {
        const header = (name: string) => {
          const value = res.headers[name];
          return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
        };
        resolve({
          status: res.statusCode!,
          role: header('x-flight-role'),
          cookie: header('set-cookie'),
          age: header('age'),
          contentType: header('content-type'),
          contentLength: header('content-length'),
          body,
          firstAt,
          endAt: performance.now(),
          aborted: aborted || !res.complete,
        });
      });
    });
    request.on('error', reject);
  });
  return {
    done,
    get body() {
      return body;
    },
    leave: () => request.destroy(),
  };
}

export async function until(condition: () => boolean, what: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

/** Registers the streamed-response tests for one driver (inside its `describe`). */
export function registerStreamSuite(driver: Driver): void {
  describe('streamed responses (stream: true) across server processes over Redis', () => {
    const { nodes, prefix, redis } = streamServers(driver, 'stream', 2);
    const count = async (key: string) => Number(await redis().get(key));

    for (const kind of ['sse', 'chunked'] as const) {
      it(`${kind}: identical requests on two processes run the handler once; every client gets the events live, a late joiner all of them, a later request the replay`, async () => {
        const id = `${kind}-${randomBytes(4).toString('hex')}`;
        const keys = streamKeys(prefix, id);
        const path = `/r/live/${kind}/${id}`;
        const clients = 6;
        const headers = { 'x-expect': String(clients) };
        // The handler writes event 1, then waits until every client received a first piece: only a live stream lets it go on.
        const streams = Array.from({ length: clients }, (_, i) => open(nodes[i % 2]!, path, headers, () => redis().incr(keys.seen)));
        await until(() => streams.every((stream) => stream.body.includes(STREAM_EVENTS[2]!)), 'every client to receive event 3');
        // Events 4 and 5 wait for this late joiner's first piece: it catches up from event 1.
        const late = open(nodes[1]!, path, headers, () => redis().incr(keys.late));
        const answers = await Promise.all([...streams, late].map((stream) => stream.done));

        expect(await count(keys.calls)).toBe(1);
        expect(await redis().get(keys.stalled)).toBeNull();
        for (const answer of answers) {
          expect({ status: answer.status, body: answer.body, aborted: answer.aborted }).toEqual({
            status: 200,
            body: WHOLE,
            aborted: false,
          });
          expect(answer.contentType).toBe(kind === 'sse' ? 'text/event-stream' : 'text/plain; charset=utf-8');
          expect(answer.contentLength).toBeNull();
        }
        expect(answers.map((answer) => answer.role).sort()).toEqual([...Array<string>(clients).fill('follower'), 'owner']);
        const ownerEnd = answers.find((answer) => answer.role === 'owner')!.endAt;
        for (const answer of answers) expect(answer.firstAt).toBeLessThan(ownerEnd);

        // After completion: the stored response, on either process, without a run.
        for (const node of nodes) {
          const replay = await open(node, path, headers).done;
          expect({ status: replay.status, body: replay.body }).toEqual({ status: 200, body: WHOLE });
          expect(['replay', 'l1']).toContain(replay.role);
        }
        expect(await count(keys.calls)).toBe(1);
      });
    }

    it('a streamed Cache-Control: private response is never shared: every client runs the handler and gets its own stream', async () => {
      const id = `private-${randomBytes(4).toString('hex')}`;
      const path = `/r/paced/private/${id}`;
      const answers = await Promise.all(Array.from({ length: 4 }, (_, i) => open(nodes[i % 2]!, path, {}).done));
      expect(await count(streamKeys(prefix, id).calls)).toBe(4);
      for (const answer of answers) {
        expect({ status: answer.status, body: answer.body }).toEqual({ status: 200, body: WHOLE });
        expect(answer.role).not.toBe('follower');
      }
    });

    it('a streamed Cache-Control: no-cache response is shared by the callers that join its run, and never replayed after it', async () => {
      const id = `nocache-${randomBytes(4).toString('hex')}`;
      const path = `/r/paced/nocache/${id}`;
      // Each run joined once it is under way (events 300 ms apart: a loaded machine still meets it running).
      const slow = { 'x-gap': '300' };
      const owner = open(nodes[0]!, path, slow);
      await until(() => owner.body.length > 0, 'the owner to start');
      const joined = await Promise.all([owner, ...[0, 1, 1].map((n) => open(nodes[n]!, path, slow))].map((stream) => stream.done));
      expect(joined.map((answer) => answer.body)).toEqual(Array<string>(4).fill(WHOLE));
      expect(await count(streamKeys(prefix, id).calls)).toBe(1);
      // Past the stored copy's life (its freshness, none, plus 500 ms for the callers that joined).
      await sleep(700);
      const next = open(nodes[0]!, path, slow);
      await until(() => next.body.length > 0, 'the next run to start');
      const later = await Promise.all([next, open(nodes[1]!, path, slow)].map((stream) => stream.done));
      expect(later.map((answer) => answer.role)).toEqual(['owner', 'follower']);
      expect(await count(streamKeys(prefix, id).calls)).toBe(2);
    });

    it('a streamed Cache-Control: max-age=60 response is replayed after its run on either process, with its Age', async () => {
      const id = `fresh-${randomBytes(4).toString('hex')}`;
      const path = `/r/paced/fresh/${id}`;
      expect((await open(nodes[0]!, path, {}).done).role).toBe('owner');
      await sleep(1100);
      for (const node of nodes) {
        const replay = await open(node, path, {}).done;
        expect({ body: replay.body, age: replay.age, stored: replay.role === 'replay' || replay.role === 'l1' }).toEqual({
          body: WHOLE,
          age: '1',
          stored: true,
        });
      }
      expect(await count(streamKeys(prefix, id).calls)).toBe(1);
    });

    it("a streamed response's Set-Cookie reaches the owner's client only", async () => {
      const id = `cookie-${randomBytes(4).toString('hex')}`;
      const path = `/r/paced/cookie/${id}`;
      const owner = open(nodes[0]!, path, {});
      await until(() => owner.body.length > 0, 'the owner to start');
      const followers = Array.from({ length: 4 }, (_, i) => open(nodes[i % 2]!, path, {}));
      const answers = await Promise.all([owner, ...followers].map((stream) => stream.done));
      expect(await count(streamKeys(prefix, id).calls)).toBe(1);
      expect(answers.map((answer) => answer.body)).toEqual(Array<string>(5).fill(WHOLE));
      expect(answers.map((answer) => answer.cookie)).toEqual([`sid=${id}`, null, null, null, null]);
    });

    it("a handler whose stream fails after the head: the other clients' responses are cut short, never ended as if complete; the failure is not replayed", async () => {
      const id = `broken-${randomBytes(4).toString('hex')}`;
      const keys = streamKeys(prefix, id);
      const path = `/r/paced/broken/${id}`;
      const owner = open(nodes[0]!, path, {});
      await until(() => owner.body.length > 0, 'the owner to start');
      const followers = await Promise.all([0, 1, 0].map((n) => open(nodes[n]!, path, {}).done));
      owner.leave();
      await owner.done;
      const twoEvents = STREAM_EVENTS.slice(0, 2).join('');
      for (const answer of followers) {
        expect({ aborted: answer.aborted, role: answer.role }).toEqual({ aborted: true, role: 'follower' });
        expect(twoEvents.startsWith(answer.body)).toBe(true);
      }
      expect(await count(keys.calls)).toBe(1);
      // (Koa 2 leaves a response whose stream body failed open: each client leaves once it saw enough.)
      const next = open(nodes[1]!, path, {});
      await until(() => next.body.length > 0, 'the next request to start');
      next.leave();
      expect((await next.done).role).toBe('owner');
      expect(await count(keys.calls)).toBe(2);
    });

    it("a follower's client going away detaches only it; the owner's client going away does not stop the stream for the others", async () => {
      const id = `leave-${randomBytes(4).toString('hex')}`;
      const path = `/r/paced/plain/${id}`;
      const owner = open(nodes[0]!, path, {});
      await until(() => owner.body.length > 0, 'the owner to start');
      const leaving = open(nodes[1]!, path, {});
      const staying = [open(nodes[0]!, path, {}), open(nodes[1]!, path, {})];
      await until(() => leaving.body.length > 0 && staying.every((stream) => stream.body.length > 0), 'the followers to start');
      owner.leave();
      leaving.leave();
      const [ownerAnswer, leavingAnswer, ...stayingAnswers] = await Promise.all([owner, leaving, ...staying].map((stream) => stream.done));
      expect(ownerAnswer!.aborted && leavingAnswer!.aborted).toBe(true);
      for (const answer of stayingAnswers)
        expect({ body: answer.body, aborted: answer.aborted, role: answer.role }).toEqual({
          body: WHOLE,
          aborted: false,
          role: 'follower',
        });
      expect(await count(streamKeys(prefix, id).calls)).toBe(1);
    });
  });
}
