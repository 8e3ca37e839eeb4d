/**
 * A counting TCP proxy in front of Redis: counts the commands each client sends (top-level RESP
 * arrays, by name; see `BEHIND` for commands pipelined behind a subscription) and the connections opened. Client-agnostic (ioredis, node-redis, any library)
 * and counts what crosses the wire, so commands run inside Lua scripts are not counted.
 * Used only in the counting phases, never in the timed ones.
 */
import net from 'node:net';

class RespCounter {
  private buf: Buffer = Buffer.alloc(0);
  /** Remaining bulk strings of the current command, and the bytes still expected. */
  private args = 0;
  private need = -1;
  private first = true;
  constructor(
    private readonly onCommand: (name: string) => void,
    /** Each argument after the command name (only arguments up to 512 bytes: keys and channels, not values). */
    private readonly onArg?: (arg: string) => void,
  ) {}

  push(chunk: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    let pos = 0;
    for (;;) {
      if (this.need >= 0) {
        if (this.buf.length - pos < this.need + 2) break;
        if (this.first)
          this.onCommand(
            this.buf
              .subarray(pos, pos + this.need)
              .toString('latin1')
              .toLowerCase(),
          );
        else if (this.onArg && this.need <= 512) this.onArg(this.buf.subarray(pos, pos + this.need).toString('latin1'));
        this.first = false;
        pos += this.need + 2;
        this.need = -1;
        this.args--;
        continue;
      }
      const eol = this.buf.indexOf('\r\n', pos);
      if (eol < 0) break;
      const line = this.buf.subarray(pos, eol).toString('latin1');
      pos = eol + 2;
      if (line[0] === '*') {
        this.args = Number(line.slice(1));
        this.first = true;
      } else if (line[0] === '$') {
        this.need = Number(line.slice(1));
      } else if (line.length) {
        // inline command
        this.onCommand(line.split(' ')[0]!.toLowerCase());
      }
    }
    this.buf = this.buf.subarray(pos);
  }
}

/**
 * Reads RESP values from a server→client byte stream (RESP2 and RESP3) and hands each top-level
 * value to `onValue`. Used on subscriber connections only, to see the messages pushed to them.
 */
class RespReader {
  private buf: Buffer = Buffer.alloc(0);
  constructor(private readonly onValue: (value: unknown) => void) {}

  push(chunk: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    let pos = 0;
    for (;;) {
      const parsed = this.read(pos);
      if (!parsed) break;
      pos = parsed.end;
      this.onValue(parsed.value);
    }
    this.buf = this.buf.subarray(pos);
  }

  /** One value from `pos`, or null while it is incomplete. */
  private read(pos: number): { value: unknown; end: number } | null {
    const eol = this.buf.indexOf('\r\n', pos);
    if (eol < 0) return null;
    const type = String.fromCharCode(this.buf[pos]!);
    const line = this.buf.subarray(pos + 1, eol).toString('latin1');
    let end = eol + 2;
    if ('$=!'.includes(type)) {
      const n = Number(line);
      if (n < 0) return { value: null, end };
      if (this.buf.length < end + n + 2) return null;
      return { value: this.buf.subarray(end, end + n).toString('utf8'), end: end + n + 2 };
    }
    if ('*>~%|'.includes(type)) {
      const n = Number(line) * ('%|'.includes(type) ? 2 : 1);
      if (n < 0) return { value: null, end };
      const items: unknown[] = [];
      for (let i = 0; i < n; i++) {
        const item = this.read(end);
        if (!item) return null;
        items.push(item.value);
        end = item.end;
      }
      return { value: items, end };
    }
    return { value: line, end };
  }
}

/** What one subscriber connection received: bytes, and each pushed message's channel and payload. */
export interface SubscriberTraffic {
  bytes: number;
  messages: { channel: string; payload: string }[];
  /** Every `{hash tag}` in the keys and channels this client sent (with `observeSubscribers`). */
  tags: Set<string>;
}

const SUBSCRIBE = new Set(['subscribe', 'ssubscribe', 'psubscribe']);
/** Every (un)subscription command. */
export const SUBSCRIPTION = new Set([...SUBSCRIBE, 'unsubscribe', 'sunsubscribe', 'punsubscribe']);
/**
 * Marks a command that reached the proxy in the same write as a (S|P)SUBSCRIBE before it, on that
 * connection (a RESP3 subscriber running a command behind its subscription): counted as
 * `<command> behind <subscribe>`. It costs Redis a command but the client no round trip of its own.
 */
export const BEHIND = 'behind';

/**
 * Splits the messages a process received into its own and foreign ones: a message is its own when
 * its channel or payload names one of `ownTags` (the hash tags of the flights the process waits on).
 */
export function classifyNotices(
  messages: readonly { channel: string; payload: string }[],
  ownTags: Iterable<string>,
): { own: number; foreign: number } {
  const tags = [...ownTags];
  const own = messages.filter((m) => tags.some((t) => m.channel.includes(t) || m.payload.includes(t))).length;
  return { own, foreign: messages.length - own };
}

export interface CountingProxy {
  url: string;
  /** What the connections that sent a (S|P)SUBSCRIBE received (only with `observeSubscribers`). */
  subscriberTraffic(): SubscriberTraffic;
  commands(): number;
  byCommand(): Record<string, number>;
  connections(): number;
  reset(): void;
  close(): Promise<void>;
}

export async function startCountingProxy(
  target: { host: string; port: number },
  options: { observeSubscribers?: boolean } = {},
): Promise<CountingProxy> {
  let counts = new Map<string, number>();
  let opened = 0;
  const traffic: SubscriberTraffic = { bytes: 0, messages: [], tags: new Set() };
  const onArg = options.observeSubscribers
    ? (arg: string) => {
        for (const m of arg.matchAll(/\{([^}]+)\}/g)) traffic.tags.add(m[1]!);
      }
    : undefined;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    opened++;
    const upstream = net.connect(target);
    sockets.add(client);
    sockets.add(upstream);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    let subscriber = false;
    /** A (S|P)SUBSCRIBE earlier in the chunk being read: commands after it wait for no reply of their own. */
    let subscribeInChunk: string | undefined;
    const parser = new RespCounter((name) => {
      const counted = subscribeInChunk && !SUBSCRIPTION.has(name) ? `${name} ${BEHIND} ${subscribeInChunk}` : name;
      counts.set(counted, (counts.get(counted) ?? 0) + 1);
      if (SUBSCRIBE.has(name)) {
        subscriber = true;
        subscribeInChunk = name;
      }
    }, onArg);
    // Every reply is read (so the reader stays in step); only a subscriber connection's are recorded.
    const reader = options.observeSubscribers
      ? new RespReader((value) => {
          if (!subscriber || !Array.isArray(value)) return;
          const kind = String(value[0]).toLowerCase();
          if ((kind === 'message' || kind === 'smessage') && value.length === 3)
            traffic.messages.push({ channel: String(value[1]), payload: String(value[2]) });
          if (kind === 'pmessage' && value.length === 4) traffic.messages.push({ channel: String(value[2]), payload: String(value[3]) });
        })
      : undefined;
    client.on('data', (chunk) => {
      subscribeInChunk = undefined;
      parser.push(chunk);
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (reader) {
        if (subscriber) traffic.bytes += chunk.length;
        reader.push(chunk);
      }
      client.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end);
    upstream.on('close', end);
    client.on('error', end);
    upstream.on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as net.AddressInfo;
  return {
    url: `redis://127.0.0.1:${address.port}`,
    commands: () => [...counts.values()].reduce((a, b) => a + b, 0),
    byCommand: () => Object.fromEntries([...counts.entries()].sort((a, b) => b[1] - a[1])),
    connections: () => opened,
    subscriberTraffic: () => ({ bytes: traffic.bytes, messages: [...traffic.messages], tags: new Set(traffic.tags) }),
    reset() {
      counts = new Map();
      opened = 0;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
