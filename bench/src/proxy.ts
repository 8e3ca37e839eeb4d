/**
 * A counting TCP proxy in front of Redis: counts the commands each client sends (top-level RESP
 * arrays, by name) and the connections opened. Client-agnostic (ioredis, node-redis, any library)
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
  constructor(private readonly onCommand: (name: string) => void) {}

  push(chunk: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    let pos = 0;
    for (;;) {
      if (this.need >= 0) {
        if (this.buf.length - pos < this.need + 2) break;
        if (this.first) this.onCommand(this.buf.subarray(pos, pos + this.need).toString('latin1').toLowerCase());
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

export interface CountingProxy {
  url: string;
  commands(): number;
  byCommand(): Record<string, number>;
  connections(): number;
  reset(): void;
  close(): Promise<void>;
}

export async function startCountingProxy(target: { host: string; port: number }): Promise<CountingProxy> {
  let counts = new Map<string, number>();
  let opened = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    opened++;
    const upstream = net.connect(target);
    sockets.add(client);
    sockets.add(upstream);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    const parser = new RespCounter((name) => counts.set(name, (counts.get(name) ?? 0) + 1));
    client.on('data', (chunk) => {
      parser.push(chunk);
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => client.write(chunk));
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
