/**
 * Streams that outlive their producer: three server processes over a real Redis; the producing process is
 * SIGKILLed mid-stream. A reader that resumed the stream ends with a typed error, never a hang; a caller of
 * `resumableStream` takes the stream over and makes it again; chunks already made are read from Redis.
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { deleteKeys, sharedRedisUrl, startLineProcess } from '@flight/test-servers';
import { afterAll, expect, it } from 'vitest';

interface Reply {
  id: number;
  text?: string;
  error?: string;
  result?: string;
}

interface ServerProcess {
  child: ChildProcess;
  send(command: Record<string, unknown>): Promise<Reply>;
  /** Resolves once this process reported `event` for `stream` with a count ≥ `n` (`emitted` parts, `read` characters). */
  reached(event: 'emitted' | 'read', stream: string, n: number): Promise<void>;
  stop(): Promise<void>;
}

const fixture = fileURLToPath(new URL('./fixtures/stream-node.ts', import.meta.url));
const url = sharedRedisUrl();
const prefix = `flight-rs-death-${randomUUID().slice(0, 8)}`;
const started: ServerProcess[] = [];

async function startServer(nodeId: string): Promise<ServerProcess> {
  const waiters = new Set<{ event: string; stream: string; n: number; resolve: () => void }>();
  const seen = new Map<string, number>();
  const node = await startLineProcess<Reply>(fixture, {
    env: { FLIGHT_NODE: JSON.stringify({ url, prefix, nodeId }) },
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    onEvent: (message) => {
      const { event, stream } = message as { event: string; stream: string };
      const count = Number(message.n ?? message.chars ?? 0);
      seen.set(`${event}:${stream}`, count);
      for (const waiter of waiters)
        if (waiter.event === event && waiter.stream === stream && count >= waiter.n) {
          waiters.delete(waiter);
          waiter.resolve();
        }
    },
  });
  const server: ServerProcess = {
    child: node.child,
    send: (command) => node.request(command),
    reached: (event, stream, n) =>
      (seen.get(`${event}:${stream}`) ?? 0) >= n ? Promise.resolve() : new Promise((resolve) => waiters.add({ event, stream, n, resolve })),
    stop: () => node.stop(),
  };
  started.push(server);
  return server;
}

afterAll(async () => {
  await Promise.all(started.map((s) => s.stop()));
  await deleteKeys(url, `${prefix}*`);
});

const OLD = ['old one\n', 'old two\n', 'old three\n', 'old four\n'];
const NEW = ['new one\n', 'new two\n'];

it("the producer's process is SIGKILLed mid-stream: every reader of the old run ends with a typed error; a resumableStream caller takes the stream over and makes it anew", async () => {
  const [a, b, c] = await Promise.all(['a', 'b', 'c'].map(startServer));
  const stream = randomUUID();
  void a!.send({ op: 'produce', stream, parts: OLD, holdAfter: 2 });
  await a!.reached('emitted', stream, 2);
  // B resumes the stream: the two parts made so far come from Redis.
  const resumed = b!.send({ op: 'resume', stream });
  await b!.reached('read', stream, OLD[0]!.length + OLD[1]!.length);
  a!.child.kill('SIGKILL');
  // C asks for the stream as resumableStream does: it joins the run (reading the two parts from Redis), and
  // once the dead producer's lease is over it takes the run over and makes the stream anew.
  const joined = c!.send({ op: 'resumable', stream, parts: NEW });
  await c!.reached('emitted', stream, NEW.length);
  // Whoever had read the old run's parts ends with the run-replaced error: no hang, never a mixed text.
  expect(await resumed).toMatchObject({ error: 'E_FLIGHT_STREAM_INTERRUPTED' });
  expect(await joined).toMatchObject({ error: 'E_FLIGHT_STREAM_INTERRUPTED' });
  // The stream made anew is whole for the next reader, on any server, while it runs (null once it is done,
  // as for any done stream), and nobody makes it a third time.
  for (const op of ['resume', 'resumable']) {
    const next = await b!.send({ op, stream, parts: ['never\n'] });
    expect([NEW.join(''), undefined]).toContain(next.text);
    if (next.text === undefined) expect(next.result).toBe('null');
  }
}, 60_000);

it('the producer dies and nobody makes the stream again: a resumed reader ends with a typed error once the lease is over', async () => {
  const [a, b] = await Promise.all(['d', 'e'].map(startServer));
  const stream = randomUUID();
  void a!.send({ op: 'produce', stream, parts: OLD, holdAfter: 1 });
  await a!.reached('emitted', stream, 1);
  const resumed = b!.send({ op: 'resume', stream });
  await b!.reached('read', stream, OLD[0]!.length);
  a!.child.kill('SIGKILL');
  const reply = await resumed;
  expect(reply.text).toBeUndefined();
  expect(reply.error).toBe('E_FLIGHT_STREAM_INTERRUPTED');
}, 60_000);
