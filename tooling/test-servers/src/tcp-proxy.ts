/**
 * A small TCP proxy for fault tests: sits between one client and Redis and can pass traffic, delay it,
 * hold it (keep every byte, both ways, and deliver it in order once the mode changes), blackhole it (accept
 * and swallow bytes, never answer), or reset every connection. Also counts bytes
 * so a test can tell whether a command reached the server.
 */
import net from 'node:net';

export type ProxyMode = 'pass' | 'delay' | 'hold' | 'blackhole' | 'reset' | 'drop-replies';

export interface TcpProxy {
  readonly port: number;
  readonly url: string;
  mode: ProxyMode;
  /** Extra latency per chunk in `delay` mode (both directions). */
  delayMs: number;
  /** Destroys every open connection (a TCP reset as the client sees it). */
  resetAll(): void;
  /** Open client connections. */
  readonly connections: number;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host?: string; port: number }): Promise<TcpProxy> {
  const host = target.host ?? '127.0.0.1';
  const pairs = new Set<{ client: net.Socket; upstream: net.Socket }>();
  const state = { mode: 'pass' as ProxyMode, delayMs: 0 };
  /** What `hold` kept, in the order it came. */
  const held: { to: net.Socket; chunk: Buffer }[] = [];
  const release = () => {
    for (const { to, chunk } of held.splice(0)) if (!to.destroyed) to.write(chunk);
  };

  const forward = (from: net.Socket, to: net.Socket, isReply: boolean) => {
    from.on('data', (chunk) => {
      const mode = state.mode;
      if (mode === 'blackhole') return;
      if (mode === 'hold') {
        held.push({ to, chunk });
        return;
      }
      if (mode === 'drop-replies' && isReply) return;
      if (mode === 'reset') {
        from.destroy();
        to.destroy();
        return;
      }
      if (mode === 'delay' && state.delayMs > 0) {
        from.pause();
        setTimeout(() => {
          if (!to.destroyed) to.write(chunk);
          from.resume();
        }, state.delayMs);
        return;
      }
      if (!to.destroyed) to.write(chunk);
    });
  };

  const server = net.createServer((client) => {
    if (state.mode === 'reset' || state.mode === 'blackhole') {
      if (state.mode === 'reset') client.destroy();
      else {
        client.on('error', () => undefined);
        const pair = { client, upstream: new net.Socket() };
        pairs.add(pair);
        client.on('close', () => pairs.delete(pair));
      }
      return;
    }
    const upstream = net.connect({ host, port: target.port });
    const pair = { client, upstream };
    pairs.add(pair);
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
    const close = () => {
      client.destroy();
      upstream.destroy();
      pairs.delete(pair);
    };
    client.on('close', close);
    upstream.on('close', close);
    forward(client, upstream, false);
    forward(upstream, client, true);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  const resetAll = () => {
    for (const pair of [...pairs]) {
      pair.client.resetAndDestroy?.();
      pair.client.destroy();
      pair.upstream.destroy();
    }
    pairs.clear();
  };
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    get mode() {
      return state.mode;
    },
    set mode(value: ProxyMode) {
      state.mode = value;
      if (value !== 'hold') release();
    },
    get delayMs() {
      return state.delayMs;
    },
    set delayMs(value: number) {
      state.delayMs = value;
    },
    get connections() {
      return pairs.size;
    },
    resetAll,
    async close() {
      resetAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
