/**
 * A tiny RESP2 client for test utilities (no client library needed): one command per connection.
 */
import net from 'node:net';

export type RespValue = string | number | null | RespValue[] | Error;

function parse(buffer: Buffer, offset: number): { value: RespValue; next: number } | undefined {
  const end = buffer.indexOf('\r\n', offset);
  if (end === -1) return undefined;
  const type = String.fromCharCode(buffer[offset]!);
  const line = buffer.toString('utf8', offset + 1, end);
  switch (type) {
    case '+':
      return { value: line, next: end + 2 };
    case '-':
      return { value: new Error(line), next: end + 2 };
    case ':':
      return { value: Number(line), next: end + 2 };
    case '$': {
      const length = Number(line);
      if (length === -1) return { value: null, next: end + 2 };
      if (buffer.length < end + 2 + length + 2) return undefined;
      return { value: buffer.toString('utf8', end + 2, end + 2 + length), next: end + 2 + length + 2 };
    }
    case '*': {
      const count = Number(line);
      if (count === -1) return { value: null, next: end + 2 };
      const items: RespValue[] = [];
      let next = end + 2;
      for (let i = 0; i < count; i++) {
        const item = parse(buffer, next);
        if (!item) return undefined;
        items.push(item.value);
        next = item.next;
      }
      return { value: items, next };
    }
    default:
      throw new Error(`unexpected RESP type ${type}`);
  }
}

/** Sends one command to host:port and resolves with its reply (server errors resolve as `Error` values). */
export function rawCommand(port: number, args: (string | number)[], host = '127.0.0.1', timeoutMs = 5000): Promise<RespValue> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port });
    let data = Buffer.alloc(0);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no reply from ${host}:${port} within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.on('connect', () => {
      const parts = args.map(String);
      socket.write(`*${parts.length}\r\n${parts.map((p) => `$${Buffer.byteLength(p)}\r\n${p}\r\n`).join('')}`);
    });
    socket.on('data', (chunk) => {
      data = Buffer.concat([data, chunk]);
      const parsed = parse(data, 0);
      if (parsed) {
        clearTimeout(timer);
        socket.destroy();
        resolve(parsed.value);
      }
    });
  });
}

/** The Redis server's clock (`TIME`) in epoch milliseconds. */
export async function serverTimeMs(port: number): Promise<number> {
  const [s, us] = (await rawCommand(port, ['TIME'])) as [string, string];
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}
