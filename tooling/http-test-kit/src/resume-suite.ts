/**
 * Resumable streams (routes with `resume: true`) across three server processes of a driver behind the
 * shared Redis: clients that leave mid-stream and come back on another node with `Last-Event-ID` (or the
 * query parameter) get exactly the events they had not received, during the run and after it, with one
 * handler run; another user's id, a malformed id and a stream that is gone get their documented answers.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { seeded } from '@flight/test-servers';
import type { Driver } from './middleware-suite.js';
import { STREAM_EVENTS, streamKeys } from './stream-routes.js';
import { backendName, streamServers, type StreamBackend } from './stream-servers.js';
import { open, until } from './stream-suite.js';

/** An event as a client parses it: its data and its id. */
interface ParsedEvent {
  data: string;
  id: string | undefined;
  event: string | undefined;
}

function parseEvents(body: string): ParsedEvent[] {
  return body
    .split(/\r?\n\r?\n/)
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const fields = new Map<string, string>();
      for (const line of block.split(/\r?\n/)) {
        const colon = line.indexOf(':');
        if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1).trimStart());
      }
      return { data: fields.get('data') ?? '', id: fields.get('id'), event: fields.get('event') };
    });
}

/** The events of `body` that arrived whole (a partly received last event is not one yet). */
const wholeEvents = (body: string) => parseEvents(body.slice(0, body.lastIndexOf('\n\n') + 2));

const DATA = STREAM_EVENTS.map((event) => event.replace(/^data: /, '').trim());

/** Registers the resumable-stream tests for one driver, over the shared Redis or `backend`. */
export function registerResumeSuite(driver: Driver, backend: StreamBackend = {}): void {
  describe(`resumable streams (resume: true) across three server processes over Redis (${backendName(backend)})`, () => {
    const { nodes, prefix, redis } = streamServers(driver, 'resume', 3, { FLIGHT_RESUME: '1' }, backend);
    const calls = async (id: string) => Number(await redis().get(streamKeys(prefix, id).calls));
    const user = (name: string, extra: Record<string, string> = {}) => ({ 'x-user': name, 'x-gap': '150', ...extra });

    it('a client that leaves after two events resumes on another node during the run, and a third after it, with one handler run', async () => {
      const id = `live-${randomBytes(4).toString('hex')}`;
      const path = `/r/paced/fresh/${id}`;
      const first = open(nodes[0]!, path, user('ann'));
      await until(() => parseEvents(first.body).length >= 2, 'two events on the first node');
      first.leave();
      const received = parseEvents(first.body).slice(0, 2);
      expect(received.map((e) => e.data)).toEqual(DATA.slice(0, 2));
      const [, second] = received;
      expect(second!.id).toMatch(/^[\w-]{16}\.\d+\.2$/);

      // During the run, on another node: exactly the events after the second.
      const resumed = await open(nodes[1]!, path, user('ann', { 'last-event-id': second!.id! })).done;
      expect(resumed.status, resumed.body).toBe(200);
      expect(resumed.contentType).toMatch(/^text\/event-stream/);
      const rest = parseEvents(resumed.body);
      expect(rest.map((e) => e.data)).toEqual(DATA.slice(2));
      expect(rest.map((e) => e.id!.split('.')[2])).toEqual(['3', '4', '5']);
      // The same flight and run on every node: one tag and epoch in every id.
      expect(new Set([...received, ...rest].map((e) => e.id!.split('.').slice(0, 2).join('.'))).size).toBe(1);

      // After the run (its response is fresh for 60 s), on a third node, by the query parameter.
      const after = await open(nodes[2]!, `${path}?lastEventId=${encodeURIComponent(rest[0]!.id!)}`, user('ann')).done;
      expect(parseEvents(after.body).map((e) => e.data)).toEqual(DATA.slice(3));
      expect(after.role).toBe('replay');
      expect(await calls(id)).toBe(1);
    });

    it("another user's id is refused (409), a malformed one too (400); neither runs the handler", async () => {
      const id = `users-${randomBytes(4).toString('hex')}`;
      const path = `/r/paced/fresh/${id}`;
      const ann = await open(nodes[0]!, path, user('ann', { 'x-gap': '10' })).done;
      const annIds = parseEvents(ann.body).map((e) => e.id!);
      expect(annIds).toHaveLength(5);
      const bob = await open(nodes[1]!, path, user('bob', { 'last-event-id': annIds[1]! })).done;
      expect(bob.status).toBe(409);
      expect(JSON.parse(bob.body).code).toBe('E_FLIGHT_HTTP_RESUME_MISMATCH');
      const bad = await open(nodes[2]!, path, user('ann', { 'last-event-id': 'not-an-id' })).done;
      expect(bad.status).toBe(400);
      expect(JSON.parse(bad.body).code).toBe('E_FLIGHT_HTTP_RESUME_INVALID');
      expect(await calls(id)).toBe(1);
    });

    it('a resume whose stream is gone gets 410 and does not run the handler again', async () => {
      const id = `gone-${randomBytes(4).toString('hex')}`;
      // no-cache: the completed stream is kept only for the callers that joined it (half a second).
      const path = `/r/paced/nocache/${id}`;
      const whole = await open(nodes[0]!, path, user('ann', { 'x-gap': '10' })).done;
      const ids = parseEvents(whole.body).map((e) => e.id!);
      await new Promise((resolve) => setTimeout(resolve, 800));
      const gone = await open(nodes[1]!, path, user('ann', { 'last-event-id': ids[2]! })).done;
      expect(gone.status).toBe(410);
      expect(JSON.parse(gone.body).code).toBe('E_FLIGHT_HTTP_RESUME_EXPIRED');
      expect(await calls(id)).toBe(1);
      // A new request (no id) starts a new run as before.
      const again = await open(nodes[2]!, path, user('ann', { 'x-gap': '10' })).done;
      expect(parseEvents(again.body).map((e) => e.data)).toEqual(DATA);
      expect(await calls(id)).toBe(2);
    });

    it('12 clients leave at random points and resume on other nodes, during the run and after it, again and again: each ends with the exact events, one handler run', async () => {
      const seed = Number(process.env.FLIGHT_RESUME_SEED ?? randomBytes(4).readUInt32LE(0));
      const random = seeded(seed);
      const id = `random-${randomBytes(4).toString('hex')}`;
      const path = `/r/paced/fresh/${id}`;
      const gapMs = 120;
      /** One client, as EventSource behaves: reconnects with the last id it received, to another node. */
      const client = async (c: number) => {
        const got: ParsedEvent[] = [];
        const hops: string[] = [];
        for (let hop = 0, node = c % 3; got.length < DATA.length; hop++, node = (node + 1 + Math.floor(random() * 2)) % 3) {
          const lastId = got.at(-1)?.id;
          const stream = open(nodes[node]!, path, user('ann', { 'x-gap': String(gapMs), ...(lastId ? { 'last-event-id': lastId } : {}) }));
          // Leave after 1 to 3 more events, at most three times (client 0: once), then read to the end.
          const leaveAt = hop < 3 && !(c === 0 && hop > 0) ? got.length + 1 + Math.floor(random() * 3) : Infinity;
          if (leaveAt < DATA.length) {
            const more = leaveAt - got.length;
            let ended = false;
            void stream.done.then(() => (ended = true));
            await until(() => ended || wholeEvents(stream.body).length >= more, `event ${leaveAt} (seed ${seed})`);
            stream.leave();
            const events = wholeEvents(stream.body);
            expect(events.length, `${stream.body} (seed ${seed})`).toBeGreaterThanOrEqual(more);
            got.push(...events.slice(0, more));
            hops.push(`${node}:left after ${got.length}`);
            // Back at once, or after a pause that may outlast the run (5 events × gap); client 0 always does.
            const pause = c === 0 && hop === 0 ? 10 * gapMs : random() < 0.5 ? 0 : Math.floor(random() * 8 * gapMs);
            await new Promise((resolve) => setTimeout(resolve, pause));
          } else {
            const answer = await stream.done;
            expect(answer.status, `${answer.body} (seed ${seed})`).toBe(200);
            got.push(...parseEvents(answer.body));
            hops.push(`${node}:${answer.role} to the end`);
          }
        }
        return { got, hops };
      };
      const clients = await Promise.all(Array.from({ length: 12 }, (_, c) => client(c)));
      for (const { got, hops } of clients) {
        const what = `seed ${seed}, hops ${hops.join(' → ')}`;
        expect(
          got.map((e) => e.data),
          what,
        ).toEqual(DATA);
        expect(
          got.map((e) => e.id!.split('.')[2]),
          what,
        ).toEqual(['1', '2', '3', '4', '5']);
      }
      // One flight and one run: a single tag and epoch in every id, one handler run.
      expect(new Set(clients.flatMap(({ got }) => got.map((e) => e.id!.split('.').slice(0, 2).join('.')))).size).toBe(1);
      // After the run: resuming from the second event replays the rest from the stored run (Redis's copy, or the
      // node's L1 copy). Until the run is stored (a busy machine can still be storing it) such a resume follows
      // it; either way the events are exact.
      const second = clients[0]!.got[1]!.id!;
      let late: Awaited<ReturnType<typeof open>['done']>;
      for (let attempt = 0; ; attempt++) {
        late = await open(nodes[attempt % 3]!, path, user('ann', { 'x-gap': String(gapMs), 'last-event-id': second })).done;
        expect(parseEvents(late.body).map((e) => e.data)).toEqual(DATA.slice(2));
        if (late.role === 'replay' || late.role === 'l1' || attempt >= 100) break;
      }
      expect(['replay', 'l1'], `seed ${seed}`).toContain(late.role);
      expect(await calls(id)).toBe(1);
    }, 60_000);

    it('the owner process is SIGKILLed mid-stream: the client resuming on another node gets flight-restart, then the new run whole', async () => {
      const id = `killed-${randomBytes(4).toString('hex')}`;
      const path = `/r/paced/fresh/${id}`;
      const first = open(nodes[2]!, path, user('ann', { 'x-gap': '400' }));
      await until(() => parseEvents(first.body).length >= 2, 'two events from the owner');
      nodes[2]!.child.kill('SIGKILL');
      const received = parseEvents(first.body);
      // As EventSource does: reconnect with the last id received, again whenever the connection ends early.
      const events: ParsedEvent[] = [];
      let lastId = received[received.length - 1]!.id!;
      for (
        let attempt = 0;
        attempt < 3 && !events.some((e) => e.data === DATA[4] && events.some((r) => r.event === 'flight-restart'));
        attempt++
      ) {
        const resumed = await open(nodes[attempt % 2]!, path, user('ann', { 'last-event-id': lastId, 'x-gap': '10' })).done;
        const got = parseEvents(resumed.body);
        events.push(...got);
        lastId = got.at(-1)?.id ?? lastId;
      }
      const restart = events.findIndex((e) => e.event === 'flight-restart');
      expect(restart, JSON.stringify(events)).toBeGreaterThanOrEqual(0);
      // Before the restart: what the dead run still had after the client's last event; then a new run whole.
      expect(events.slice(0, restart).map((e) => e.data)).toEqual(DATA.slice(received.length, received.length + restart));
      expect(JSON.parse(events[restart]!.data)).toEqual({ reason: 'takeover' });
      expect(events.slice(restart + 1).map((e) => e.data)).toEqual(DATA);
      const oldEpoch = Number(received[0]!.id!.split('.')[1]);
      expect(Number(events.at(-1)!.id!.split('.')[1])).toBeGreaterThan(oldEpoch);
      expect(await calls(id)).toBe(2);
    }, 20_000);
  });
}
